import { describe, expect, it } from 'vitest';

import { rotateToken } from '../../src/rotation/rotate-token.js';
import { expectSettled } from '../fakes/expectations.js';
import { DAY, newStateKey, openWorld } from '../fakes/fake-deps.js';
import type { MemoryStateBackend } from '../fakes/memory-state-backend.js';

/** A view of the state that counts the reads of records made through it. */
function countingReads(world: ReturnType<typeof openWorld>): MemoryStateBackend & { reads: string[] } {
  const view = world.storage.open();
  const reads: string[] = [];
  return {
    ...view,
    reads,
    state: {
      ...view.state,
      read: async (name) => {
        reads.push(name);
        return view.state.read(name);
      },
    },
  };
}

// Each read of a record is a file read, a JSON parse, a schema check and a MAC check: a rotation
// reads it for its check and for its commit, not once more to learn a failure count it just wrote.
describe('the reads of a rotation', () => {
  it.each([
    ['a first rotation', false],
    ['a rotation of a settled name, with a state key', true],
  ])('%s reads its record for the check and the commit only', async (_what, settledFirst) => {
    const world = openWorld();
    const stateKey = newStateKey();
    const { policy } = world.token('ingest');
    if (settledFirst) {
      await rotateToken(policy, world.process({ stateKey }), { lockWaitMs: 0 });
      world.clock.advance(40 * DAY);
    }
    const backend = countingReads(world);
    const run = world.process({ backend, stateKey });
    expect(await rotateToken(policy, run, { lockWaitMs: 0 })).toMatchObject({ action: 'rotated' });
    expect(backend.reads).toEqual(['ingest', 'ingest']);
    expect((await expectSettled(world, run.view, policy)).consecutiveFailures).toBe(0);
  });

  it('a success after failures still reads the record and resets its count', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    world.service.onRegenerate({ kind: 'refuse', status: 403 });
    expect(await rotateToken(policy, world.process(), { lockWaitMs: 0 })).toMatchObject({ action: 'failed' });
    const backend = countingReads(world);
    const run = world.process({ backend });
    expect(await rotateToken(policy, run, { lockWaitMs: 0 })).toMatchObject({ action: 'rotated' });
    expect(backend.reads, 'the commit carried the count: it is read and reset').toHaveLength(3);
    expect((await world.storage.open().state.read('ingest'))?.consecutiveFailures).toBe(0);
  });
});

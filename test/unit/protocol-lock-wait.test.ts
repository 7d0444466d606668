import { describe, expect, it } from 'vitest';

import { StateError } from '../../src/errors.js';
import { rotateToken } from '../../src/rotation/rotate-token.js';
import type { NameLocks } from '../../src/state/name-locks.js';
import { expectSettled, mustHold } from '../fakes/expectations.js';
import { openWorld, type World } from '../fakes/fake-deps.js';
import type { MemoryStateBackend } from '../fakes/memory-state-backend.js';

/** A view of the state whose every lock is held by another live process; `asked` collects the waits. */
function alwaysBusy(world: World, asked: number[]): MemoryStateBackend {
  const view = world.storage.open();
  const locks: NameLocks = {
    acquire: async (_name, { waitMs }) => {
      asked.push(waitMs);
      return { busy: { who: 'process 9', since: world.clock.now().toISOString() } };
    },
  };
  return { ...view, locks };
}

/** A name rotated once with onDrift: redeliver, whose second sink then lost the secret. */
async function lackingASink() {
  const world = openWorld();
  const { policy } = world.token('ingest', { settings: { onDrift: 'redeliver' } });
  await rotateToken(policy, world.process(), { lockWaitMs: 0 });
  const current = world.service.committed()[0]!.newId!;
  world.destinations.lose('ingest-b');
  return { world, policy, current };
}

describe("the wait for a name's lock", () => {
  it('is as long as the run was told, and a name not due is then skipped', async () => {
    const world = openWorld();
    const { policy, id, secret } = world.token('ingest', { expiresInMs: 60 * 24 * 3600_000 });
    world.destinations.put('ingest-a', secret);
    world.destinations.put('ingest-b', secret);
    const asked: number[] = [];
    const outcome = await rotateToken(policy, world.process({ backend: alwaysBusy(world, asked) }), { lockWaitMs: 25 });
    expect(outcome).toMatchObject({ action: 'skipped', check: 'busy', oldId: id, sinks: [], orphans: [] });
    expect(asked).toEqual([25]);
  });

  it('held by a process that cannot be identified: it is named as another process', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    const view = world.storage.open();
    const anonymous: MemoryStateBackend = { ...view, locks: { acquire: async () => ({ busy: undefined }) } };
    const outcome = await rotateToken(policy, world.process({ backend: anonymous }), { lockWaitMs: 0 });
    expect(outcome).toMatchObject({ action: 'failed', check: 'busy', reason: expect.stringContaining('another process') });
  });

  it('has a default when the run names none', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    const asked: number[] = [];
    await rotateToken(policy, world.process({ backend: alwaysBusy(world, asked) }));
    expect(asked).toHaveLength(1);
    expect(asked[0]).toBeGreaterThan(0);
    expect(Number.isFinite(asked[0])).toBe(true);
  });

  it('is longer when a sink lacks the current secret: the holder is redelivering it, and is over in moments', async () => {
    const { world, policy, current } = await lackingASink();
    const asked: number[] = [];
    const outcome = await rotateToken(policy, world.process({ backend: alwaysBusy(world, asked) }), { lockWaitMs: 25 });
    expect(asked).toHaveLength(2);
    expect(asked[0]).toBe(25);
    expect(asked[1]).toBeGreaterThan(25);
    expect(outcome).toMatchObject({
      action: 'failed',
      check: 'busy',
      stage: 'check',
      oldId: current,
      sinks: [],
      orphans: [],
      drift: [{ sink: 'memory ingest-b', kind: 'missing' }],
      reason: expect.stringMatching(/process 9/),
      error: { code: 'ERR_LOCKED' },
    });
    expect(world.destinations.secret('ingest-b')).toBeUndefined();
    expect(await world.storage.open().state.read('ingest'), 'a busy run records nothing').toMatchObject({ consecutiveFailures: 0 });
  });

  it('when that holder lets go within the longer wait, this run redelivers the secret', async () => {
    const { world, policy, current } = await lackingASink();
    const holder = await mustHold(world.storage.open().locks.acquire('ingest', { waitMs: 0 }));
    const run = world.process();
    const waiting = rotateToken(policy, run, { lockWaitMs: 0 });
    setTimeout(() => void holder.release(), 50);
    expect(await waiting).toMatchObject({ action: 'redelivered', sinks: [{ sink: 'memory ingest-b', result: 'created' }] });
    await expectSettled(world, run.view, policy, current);
    expect(world.service.regenerates).toHaveLength(1);
  });

  it('that cannot even be tried (the state folder unreadable) fails the check, and nothing is sent', async () => {
    const world = openWorld();
    const { policy, id } = world.token('ingest');
    const view = world.storage.open();
    const broken: MemoryStateBackend = {
      ...view,
      locks: {
        acquire: async () => {
          throw new StateError('cannot create the lock file: permission denied (injected)');
        },
      },
    };
    const outcome = await rotateToken(policy, world.process({ backend: broken }), { lockWaitMs: 0 });
    expect(outcome).toMatchObject({
      name: 'ingest',
      action: 'failed',
      stage: 'check',
      oldId: id,
      sinks: [],
      orphans: [],
      reason: expect.stringMatching(/permission denied/),
      error: { code: 'ERR_STATE' },
    });
    expect(world.service.regenerates).toEqual([]);
    expect(world.service.retrieves).toEqual([]);
  });

  it("a busy name found when the stop's deadline has passed is interrupted, not failed", async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    const deadline = new AbortController();
    deadline.abort();
    const outcome = await rotateToken(policy, world.process({ backend: alwaysBusy(world, []) }), {
      lockWaitMs: 0,
      signal: deadline.signal,
    });
    expect(outcome).toMatchObject({ action: 'interrupted' });
    expect(outcome).not.toHaveProperty('error');
    expect(world.service.retrieves, 'nothing asked of the service once the deadline passed').toEqual([]);
  });

  it('whether a busy name is due cannot be told (the service is down): the run fails, saying why', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    world.service.onRetrieve({ status: 503 });
    const outcome = await rotateToken(policy, world.process({ backend: alwaysBusy(world, []) }), { lockWaitMs: 0 });
    expect(outcome).toMatchObject({
      action: 'failed',
      check: 'busy',
      stage: 'check',
      sinks: [],
      orphans: [],
      reason: expect.stringMatching(/process 9.*503/),
      error: { code: 'ERR_LOCKED' },
    });
    expect(world.service.regenerates).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';

import { SimulatedCrash } from '../../src/rotation/deps.js';
import { rotateToken } from '../../src/rotation/rotate-token.js';
import { expectSettled } from '../fakes/expectations.js';
import { openWorld } from '../fakes/fake-deps.js';

const EMERGENCY = { lockWaitMs: 0, force: { reason: 'leaked in a build log' } } as const;

/** A rotation of 'ingest' that died once its new secret was staged: the service minted it, no sink has it. */
async function stagedThenDied() {
  const world = openWorld();
  const { policy, id } = world.token('ingest');
  const dying = world.process({ crashAt: { step: 'staged' }, lockOnCrash: 'released' });
  await expect(rotateToken(policy, dying, { lockWaitMs: 0 })).rejects.toBeInstanceOf(SimulatedCrash);
  const staged = world.service.committed()[0]!.newId!;
  return { world, policy, id, staged };
}

describe('an emergency rotation that finds a staged rotation it cannot finish yet', () => {
  it('a sink still refusing: no second regenerate, the staged token stays journalled and pending, the old one current', async () => {
    const { world, policy, id, staged } = await stagedThenDied();
    world.destinations.failWrites('ingest-b');
    const run = world.process();

    const outcome = await rotateToken(policy, run, EMERGENCY);
    expect(outcome).toMatchObject({
      action: 'failed',
      check: 'resumed',
      oldId: id,
      newId: staged,
      pending: ['memory ingest-b'],
      error: { code: 'ERR_SINK' },
    });
    expect(world.service.regenerates, 'only the regenerate of the interrupted run').toHaveLength(1);
    expect(await run.journal.read('ingest'), 'the staged token stays tracked by the journal').toMatchObject({
      phase: 'staged',
      staged: { newId: staged },
      delivered: ['memory:ingest-a'],
    });
    expect((await run.state.read('ingest'))?.currentId).toBe(id);

    // Once the sink takes it, the staged token is delivered and committed, then rotated as asked.
    world.destinations.heal('ingest-b');
    const next = world.process();
    expect(await rotateToken(policy, next, EMERGENCY)).toMatchObject({ action: 'rotated', check: 'manual', oldId: staged });
    expect(world.service.committed().map((c) => c.id)).toEqual([id, staged]);
    await expectSettled(world, next.view, policy);
  });

  it('its verification failing: no second regenerate, the staged token stays journalled with the failure, nothing committed', async () => {
    const { world, policy, id, staged } = await stagedThenDied();
    world.destinations.corruptWrites('ingest-a');
    const run = world.process();

    const outcome = await rotateToken(policy, run, EMERGENCY);
    expect(outcome).toMatchObject({
      action: 'failed',
      check: 'resumed',
      newId: staged,
      verification: { result: 'failed', check: 'read-back' },
      error: { code: 'ERR_VERIFY_FAILED' },
    });
    expect(world.service.regenerates).toHaveLength(1);
    expect(await run.journal.read('ingest')).toMatchObject({
      phase: 'staged',
      staged: { newId: staged },
      verifyFailed: { check: 'read-back' },
    });
    expect((await run.state.read('ingest'))?.currentId).toBe(id);
  });
});

import { describe, expect, it } from 'vitest';

import type { RotationSettings } from '../../src/policy/rotation-settings.js';
import type { Failpoint } from '../../src/rotation/deps.js';
import { SimulatedCrash } from '../../src/rotation/deps.js';
import { rotateToken } from '../../src/rotation/rotate-token.js';
import { expectSettled } from '../fakes/expectations.js';
import { DAY, newStateKey, openWorld } from '../fakes/fake-deps.js';

/**
 * A name not due for weeks (its sinks hold its secret), whose emergency rotation died at `step`:
 * after journalling its intent, before (`intent`) or after (`regenerated`) the service acted.
 */
async function forcedRotationDied(step: Failpoint, settings: Partial<RotationSettings> = {}) {
  const world = openWorld();
  const { policy, id, secret } = world.token('ingest', { expiresInMs: 60 * DAY, settings });
  world.destinations.put('ingest-a', secret);
  world.destinations.put('ingest-b', secret);
  const dying = world.process({ crashAt: { step }, lockOnCrash: 'released' });
  await expect(rotateToken(policy, dying, { lockWaitMs: 0, force: { reason: 'leaked in a build log' } })).rejects.toBeInstanceOf(
    SimulatedCrash,
  );
  expect(JSON.parse(world.storage.readRaw('journal', 'ingest')!)).toMatchObject({ phase: 'intent', oldId: id });
  return { world, policy, id, secret };
}

describe('an intent left by a run that died around its regenerate, reconciled by the next run', () => {
  it('when the regenerate was never sent: nothing to finish, and a name not due is left alone', async () => {
    const { world, policy, id, secret } = await forcedRotationDied('intent');
    const run = world.process();
    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    expect(outcome).toMatchObject({ action: 'skipped', check: 'notDue', oldId: id, orphans: [] });
    expect(world.service.regenerates, 'nothing sent, then or now').toEqual([]);
    expect(await run.journal.read('ingest'), 'the intent is erased').toBeUndefined();
    expect(world.destinations.secret('ingest-b')).toBe(secret);
  });

  it('when the service acted and its answer died with the run: the orphan is reported and the name rotated again, saying why', async () => {
    const { world, policy, id } = await forcedRotationDied('regenerated');
    const [lost] = world.service.committed();
    const run = world.process();
    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    const [, kept] = world.service.committed();
    expect(outcome).toMatchObject({
      action: 'rotated',
      oldId: id,
      newId: kept!.newId,
      reason: expect.stringMatching(/^the secret of an interrupted regenerate was lost; manual rotation: leaked in a build log/),
      orphans: [{ oldId: id, regeneratedAt: world.clock.now().toISOString() }],
    });
    expect(lost!.newId).not.toBe(kept!.newId);
    expect(kept!.id, 'rotated again from the old token, inside its overlap').toBe(id);
    await expectSettled(world, run.view, policy);
  });

  it('when the service acted and the old token stopped at once (overlap 0): nothing is left to rotate from, ERR_ORPHANED_TOKEN', async () => {
    const { world, policy, id } = await forcedRotationDied('regenerated', { overlapMs: 0 });
    const run = world.process();
    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    expect(outcome).toMatchObject({
      action: 'failed',
      stage: 'rotation',
      oldId: id,
      orphans: [{ oldId: id }],
      error: { code: 'ERR_ORPHANED_TOKEN' },
    });
    expect(world.service.regenerates).toHaveLength(1);
    expect(await run.journal.read('ingest')).toBeUndefined();
  });

  it('when the service cannot be asked what happened, the run fails at the rotation stage and keeps the intent', async () => {
    const { world, policy } = await forcedRotationDied('regenerated');
    world.service.onRetrieve({ status: 503, times: 5 });
    const run = world.process();
    expect(await rotateToken(policy, run, { lockWaitMs: 0 })).toMatchObject({
      action: 'failed',
      stage: 'rotation',
      error: { code: 'ERR_API' },
    });
    expect(await run.journal.read('ingest')).toMatchObject({ phase: 'intent' });
    expect(world.service.regenerates).toHaveLength(1);
  });
});

describe('a staged rotation whose secret this run cannot open', () => {
  it('fails at the rotation stage, with a key error', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    const dying = world.process({ crashAt: { step: 'staged' }, stateKey: newStateKey(), lockOnCrash: 'released' });
    await expect(rotateToken(policy, dying, { lockWaitMs: 0 })).rejects.toBeInstanceOf(SimulatedCrash);
    const outcome = await rotateToken(policy, world.process(), { lockWaitMs: 0 });
    expect(outcome).toMatchObject({ action: 'failed', stage: 'rotation', error: { code: 'ERR_STATE_KEY' } });
  });
});

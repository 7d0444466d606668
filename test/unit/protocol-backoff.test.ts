import { describe, expect, it } from 'vitest';

import { rotateToken } from '../../src/rotation/rotate-token.js';
import { expectSettled } from '../fakes/expectations.js';
import { openWorld } from '../fakes/fake-deps.js';

/** The daemon's scheduled checks leave a failing name alone for a while (one minute after a first failure). */
const SCHEDULED = { lockWaitMs: 0, respectBackoff: true } as const;
const MINUTE = 60_000;

/** A due name whose regenerate was refused once, just now: one failure counted. */
async function refusedOnce() {
  const world = openWorld();
  const { policy, id } = world.token('ingest');
  world.service.onRegenerate({ kind: 'refuse', status: 403 });
  expect(await rotateToken(policy, world.process(), SCHEDULED)).toMatchObject({ action: 'failed' });
  const record = await world.storage.open().state.read('ingest');
  expect(record).toMatchObject({ consecutiveFailures: 1, lastFailure: { at: world.clock.now().toISOString() } });
  return { world, policy, id, raw: world.storage.readRaw('state', 'ingest') };
}

describe('backoff after a failure', () => {
  it('a scheduled check within the backoff leaves the name alone: nothing sent, nothing written, the count kept', async () => {
    const { world, policy, id, raw } = await refusedOnce();
    world.clock.advance(MINUTE - 1);
    const outcome = await rotateToken(policy, world.process(), SCHEDULED);
    expect(outcome).toMatchObject({
      action: 'skipped',
      check: 'backoff',
      oldId: id,
      sinks: [],
      orphans: [],
      reason: expect.stringMatching(/1 failed attempt/),
    });
    expect(world.service.regenerates, 'only the refused one').toHaveLength(1);
    expect(world.service.retrieves.slice(1), 'not even looked up again').toEqual([]);
    expect(world.storage.readRaw('state', 'ingest'), 'neither a failure nor a success is recorded').toBe(raw);
  });

  it('once the backoff has passed (to the millisecond), the scheduled check rotates it and the count is reset', async () => {
    const { world, policy } = await refusedOnce();
    world.clock.advance(MINUTE);
    const run = world.process();
    expect(await rotateToken(policy, run, SCHEDULED)).toMatchObject({ action: 'rotated' });
    expect(world.service.committed()).toHaveLength(1);
    const record = await expectSettled(world, run.view, policy);
    expect(record.consecutiveFailures).toBe(0);
  });

  it('an emergency rotation does not wait for the backoff', async () => {
    const { world, policy } = await refusedOnce();
    const run = world.process();
    expect(await rotateToken(policy, run, { ...SCHEDULED, force: { reason: 'leaked' } })).toMatchObject({
      action: 'rotated',
      check: 'manual',
    });
    await expectSettled(world, run.view, policy);
  });

  it('a run that does not respect backoff (once) checks the name as usual', async () => {
    const { world, policy } = await refusedOnce();
    expect(await rotateToken(policy, world.process(), { lockWaitMs: 0 })).toMatchObject({ action: 'rotated' });
  });

  it('a staged rotation is finished even while the name backs off: its secret is delivered without a regenerate', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    world.destinations.failWrites('ingest-b');
    expect(await rotateToken(policy, world.process(), SCHEDULED)).toMatchObject({ action: 'failed', pending: ['memory ingest-b'] });
    expect(await world.storage.open().state.read('ingest')).toMatchObject({ consecutiveFailures: 1 });
    world.destinations.heal('ingest-b');

    const run = world.process();
    expect(await rotateToken(policy, run, SCHEDULED)).toMatchObject({ action: 'rotated', check: 'resumed' });
    expect(world.service.regenerates).toHaveLength(1);
    await expectSettled(world, run.view, policy);
  });
});

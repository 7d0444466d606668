import { describe, expect, it } from 'vitest';

import { SimulatedCrash } from '../../src/rotation/deps.js';
import { rotateToken } from '../../src/rotation/rotate-token.js';
import { newStateKey, openWorld } from '../fakes/fake-deps.js';

/*
 * What a failed run leaves in the name's record for `status` and for backoff: the count of failures
 * in a row, and the last one, as a sink or the service said it.
 */

describe('the failure a run records', () => {
  it("is the sinks' own errors when a delivery failed, not why the rotation was attempted", async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    world.destinations.failWrites('ingest-a', 'quota exceeded (injected)');
    world.destinations.failWrites('ingest-b', 'permission denied (injected)');
    const run = world.process();

    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    expect(outcome).toMatchObject({
      action: 'failed',
      stage: 'rotation',
      pending: ['memory ingest-a', 'memory ingest-b'],
      error: { code: 'ERR_SINK', message: expect.stringContaining('memory ingest-a, memory ingest-b') },
    });
    expect(await run.state.read('ingest')).toMatchObject({
      consecutiveFailures: 1,
      lastFailure: {
        at: world.clock.now().toISOString(),
        code: 'ERR_SINK',
        message: 'cannot write memory ingest-a: quota exceeded (injected); cannot write memory ingest-b: permission denied (injected)',
      },
    });
  });

  it('is the error itself when no sink failed, and counts up run after run', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    world.service.onRegenerate({ kind: 'refuse', status: 403 }, { kind: 'refuse', status: 409 });
    await rotateToken(policy, world.process(), { lockWaitMs: 0 });
    world.clock.advance(1000);
    const run = world.process();
    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    expect(await run.state.read('ingest')).toMatchObject({
      consecutiveFailures: 2,
      lastFailure: { at: world.clock.now().toISOString(), code: 'ERR_API', message: outcome.error!.message },
    });
    expect(outcome.error!.message).toMatch(/409/);
  });

  it.each([
    ['longer than 500 characters is cut there, and marked as cut', 600, 'x'.repeat(500 - 30) + '…'],
    ['of exactly 500 characters is kept whole', 500, 'x'.repeat(500 - 30)],
  ])('a message %s', async (_case, total, tail) => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    const prefix = 'cannot write memory ingest-b: ';
    expect(prefix).toHaveLength(30);
    world.destinations.failWrites('ingest-b', 'x'.repeat(total - prefix.length));
    const run = world.process();
    await rotateToken(policy, run, { lockWaitMs: 0 });
    expect((await run.state.read('ingest'))?.lastFailure?.message).toBe(prefix + tail);
  });

  it('names the token that was current when it failed, not the policy id it started from', async () => {
    const world = openWorld();
    const { policy, id } = world.token('ingest');
    await rotateToken(policy, world.process(), { lockWaitMs: 0 });
    const current = world.service.committed()[0]!.newId!;
    world.service.onRegenerate({ kind: 'refuse', status: 403 });
    const outcome = await rotateToken(policy, world.process(), { lockWaitMs: 0, force: { reason: 'leaked' } });
    expect(outcome).toMatchObject({
      action: 'failed',
      stage: 'rotation',
      oldId: current,
      expiresAt: world.service.token(current)!.expiresAt!.toISOString(),
      error: { code: 'ERR_API' },
    });
    expect(current).not.toBe(id);
  });

  it('is not recorded for state this run cannot open: a wrong state key leaves the record exactly as it is', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest', { settings: { onDrift: 'redeliver' } });
    const key = newStateKey();
    await rotateToken(policy, world.process({ stateKey: key }), { lockWaitMs: 0 });
    const raw = world.storage.readRaw('state', 'ingest');
    world.destinations.lose('ingest-b');

    const outcome = await rotateToken(policy, world.process({ stateKey: newStateKey() }), { lockWaitMs: 0 });
    expect(outcome).toMatchObject({ action: 'failed', error: { code: 'ERR_STATE_KEY' } });
    expect(world.storage.readRaw('state', 'ingest')).toBe(raw);
  });

  it("is not recorded for a journal entry that is not this name's: the record stays exactly as it is", async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    await rotateToken(policy, world.process(), { lockWaitMs: 0 });
    const dying = world.process({ crashAt: { step: 'intent' }, lockOnCrash: 'released' });
    await expect(rotateToken(policy, dying, { lockWaitMs: 0, force: { reason: 'rehearsal' } })).rejects.toBeInstanceOf(SimulatedCrash);
    const entry = JSON.parse(world.storage.readRaw('journal', 'ingest')!) as Record<string, unknown>;
    world.storage.writeRaw('journal', 'ingest', JSON.stringify({ ...entry, oldId: 'planted0token' }));
    const raw = world.storage.readRaw('state', 'ingest');

    const outcome = await rotateToken(policy, world.process(), { lockWaitMs: 0 });
    expect(outcome).toMatchObject({ action: 'failed', error: { code: 'ERR_STATE_INTEGRITY' } });
    expect(world.storage.readRaw('state', 'ingest')).toBe(raw);
    expect(world.service.regenerates).toHaveLength(1);
  });

  it('is reset by the next run that succeeds, which keeps the last failure for status', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    world.destinations.failWrites('ingest-b');
    await rotateToken(policy, world.process(), { lockWaitMs: 0 });
    world.destinations.heal('ingest-b');
    const run = world.process();
    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    expect(outcome).toMatchObject({ action: 'rotated' });
    expect(outcome).not.toHaveProperty('stage');
    expect(await run.state.read('ingest')).toMatchObject({ consecutiveFailures: 0, lastFailure: expect.anything() });
  });
});

describe('a record that cannot be read', () => {
  it('is left exactly as it is for the operator: no failure is written over it', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    world.storage.writeRaw('state', 'ingest', '{"version": 1, "name": "ingest", "currentId": ');
    const outcome = await rotateToken(policy, world.process(), { lockWaitMs: 0 });
    expect(outcome).toMatchObject({ action: 'failed', stage: 'check' });
    expect(world.storage.readRaw('state', 'ingest')).toBe('{"version": 1, "name": "ingest", "currentId": ');
    expect(world.service.regenerates).toEqual([]);
  });
});

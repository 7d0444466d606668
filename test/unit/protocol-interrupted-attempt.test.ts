import { describe, expect, it } from 'vitest';

import { rotateToken } from '../../src/rotation/rotate-token.js';
import { openWorld } from '../fakes/fake-deps.js';

/**
 * A due name whose last attempt failed (a refused regenerate): its record counts one failure, which
 * is what makes scheduled checks back off.
 */
async function failedOnce() {
  const world = openWorld();
  const { policy, id } = world.token('ingest');
  world.service.onRegenerate({ kind: 'refuse', status: 403 });
  expect(await rotateToken(policy, world.process(), { lockWaitMs: 0 })).toMatchObject({ action: 'failed' });
  const before = await world.storage.open().state.read('ingest');
  expect(before).toMatchObject({ currentId: id, consecutiveFailures: 1, lastFailure: { code: 'ERR_API' } });
  return { world, policy, id, before: before! };
}

describe('a run interrupted by a stop is neither a failure nor a success', () => {
  it('a stop asked before the regenerate: interrupted, nothing sent, and the failure count stays as it was', async () => {
    const { world, policy, before } = await failedOnce();
    const stop = new AbortController();
    stop.abort();
    const run = world.process();

    const outcome = await rotateToken(policy, run, { lockWaitMs: 0, stopping: stop.signal });
    expect(outcome).toMatchObject({ action: 'interrupted' });
    expect(outcome).not.toHaveProperty('error');
    expect(world.service.regenerates, 'only the refused one').toHaveLength(1);
    expect(await run.state.read('ingest'), 'backoff is not reset by a run that did not finish').toEqual(before);
  });

  it("a stop's deadline reached while delivering: interrupted, the secret staged, and the failure count stays as it was", async () => {
    const { world, policy, before } = await failedOnce();
    const deadline = new AbortController();
    world.destinations.duringWrite('ingest-a', () => deadline.abort());
    const run = world.process();

    const outcome = await rotateToken(policy, run, { lockWaitMs: 0, signal: deadline.signal });
    expect(outcome).toMatchObject({
      action: 'interrupted',
      stage: 'rotation',
      pending: ['memory ingest-b'],
      reason: expect.stringMatching(/memory ingest-b.*staged/),
    });
    expect(world.service.committed(), 'the second regenerate was answered').toHaveLength(1);
    expect(await run.journal.read('ingest')).toMatchObject({ phase: 'staged', delivered: ['memory:ingest-a'] });
    expect(await run.state.read('ingest')).toEqual(before);
  });

  it("a stop's deadline reached while verifying: interrupted at the rotation stage, and the next run finishes it from the journal", async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    const deadline = new AbortController();
    world.destinations.duringWrite('ingest-b', () => deadline.abort());
    const run = world.process();

    const outcome = await rotateToken(policy, run, { lockWaitMs: 0, signal: deadline.signal });
    expect(outcome).toMatchObject({ action: 'interrupted', stage: 'rotation', reason: expect.stringMatching(/journal/) });
    expect(outcome).not.toHaveProperty('pending');
    expect(await run.journal.read('ingest')).toMatchObject({ phase: 'staged', delivered: ['memory:ingest-a', 'memory:ingest-b'] });
    expect(await run.state.read('ingest'), 'nothing recorded: neither a failure nor a success').toBeUndefined();

    const next = world.process();
    expect(await rotateToken(policy, next, { lockWaitMs: 0 })).toMatchObject({ action: 'rotated', check: 'resumed' });
    expect(world.service.regenerates).toHaveLength(1);
  });

  it("a stop's deadline reached before any sink was written: every sink is named as still to be delivered", async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    const deadline = new AbortController();
    world.service.onRegenerate({ kind: 'answer', meanwhile: () => deadline.abort() });
    const outcome = await rotateToken(policy, world.process(), { lockWaitMs: 0, signal: deadline.signal });
    expect(outcome).toMatchObject({
      action: 'interrupted',
      pending: ['memory ingest-a', 'memory ingest-b'],
      reason: expect.stringContaining('memory ingest-a, memory ingest-b'),
    });
    expect(world.destinations.writes).toEqual([]);
  });

  it('while a run that finishes resets the count: the contrast that shows the count is kept on purpose', async () => {
    const { world, policy } = await failedOnce();
    const run = world.process();
    expect(await rotateToken(policy, run, { lockWaitMs: 0 })).toMatchObject({ action: 'rotated' });
    expect(await run.state.read('ingest')).toMatchObject({ consecutiveFailures: 0 });
  });
});

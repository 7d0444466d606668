import { describe, expect, it } from 'vitest';

import { SimulatedCrash } from '../../src/rotation/deps.js';
import { rotateToken } from '../../src/rotation/rotate-token.js';
import { crashedAt, expectNoSecretIn, expectSettled } from '../fakes/expectations.js';
import { openWorld } from '../fakes/fake-deps.js';

/*
 * Step 6 of the protocol: after every sink holds the new secret and before commit (and so before
 * any reload), the new token is verified. A failure commits nothing and keeps the secret staged.
 */

describe('verification before commit', () => {
  it('retrieves the new id once and reads every sink back, then commits', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    const run = world.process();
    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    const [minted] = world.service.committed();
    expect(outcome).toMatchObject({ action: 'rotated', verification: { result: 'passed', checks: ['service', 'read-back'] } });
    expect(world.service.retrieves.filter((id) => id === minted!.newId)).toHaveLength(1);
    expect(run.process.steps).toContain('verifying');
    await expectSettled(world, run.view, policy);
  });

  it.each([
    ['a service that caps the lifetime', (asked: Date) => new Date(asked.getTime() - 20 * 24 * 3600_000)],
    ['a new token that never expires though an expiry was asked', () => null],
  ])('%s: committed with a warning, not kept staged; a resumed rotation commits on the same rules', async (_what, expiry) => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    world.service.onRegenerate({
      kind: 'answer',
      meanwhile: () => {
        const minted = world.service.token(world.service.regenerates.at(-1)!.newId!)!;
        minted.expiresAt = expiry(minted.expiresAt!);
      },
    });
    // Crashed once staged: the next run resumes, verifies and commits.
    await crashedAt(
      rotateToken(policy, world.process({ crashAt: { step: 'staged' }, lockOnCrash: 'released' }), { lockWaitMs: 0 }),
      'staged',
    );
    const outcome = await rotateToken(policy, world.process(), { lockWaitMs: 0 });
    expect(world.service.regenerates).toHaveLength(1);
    expect(outcome).toMatchObject({
      action: 'rotated',
      check: 'resumed',
      verification: { result: 'passed', warnings: [expect.stringMatching(/never expires, but|not .* as asked/)] },
    });
    expect(world.logs.text()).toMatch(/"step":"verify".*(never expires, but|as asked)/);
    await expectSettled(world, world.process().view, policy);
  });

  it('a sink that stores something else is caught by read-back: nothing committed, the secret staged, exit as a failure', async () => {
    const world = openWorld();
    const { policy, id } = world.token('ingest');
    world.destinations.corruptWrites('ingest-b');
    const run = world.process();
    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    expect(outcome).toMatchObject({
      action: 'failed',
      verification: { result: 'failed', check: 'read-back', message: 'memory ingest-b holds another secret than the one delivered' },
      error: {
        code: 'ERR_VERIFY_FAILED',
        message: expect.stringMatching(/nothing committed and no consumer reloaded.*old token keeps working until/),
      },
    });
    const observer = world.storage.open();
    expect((await observer.state.read('ingest'))?.currentId).toBe(id);
    const entry = await observer.journal.read('ingest');
    expect(entry).toMatchObject({ phase: 'staged', verifyFailed: { check: 'read-back' } });

    // Repaired, the next run writes the sink that reads back wrong, verifies again and commits: one regenerate.
    world.destinations.heal('ingest-b');
    const next = world.process();
    const finished = await rotateToken(policy, next, { lockWaitMs: 0 });
    expect(finished).toMatchObject({ action: 'rotated', check: 'resumed', verification: { result: 'passed' } });
    expect(world.service.regenerates).toHaveLength(1);
    await expectSettled(world, next.view, policy);
    expectNoSecretIn(world.logs.text(), world.service);
  });

  it('the service not knowing the new id fails the service check; the next run verifies again before anything else', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    world.service.onRegenerate({
      kind: 'answer',
      meanwhile: () => {
        // The answer is on its way; the next retrieve (of the new id) fails.
        world.service.onRetrieve({ status: 503, times: 1 });
      },
    });
    const outcome = await rotateToken(policy, world.process(), { lockWaitMs: 0 });
    expect(outcome).toMatchObject({ action: 'failed', verification: { result: 'failed', check: 'service' } });
    const writes = world.destinations.writes.length;

    const next = world.process();
    expect(await rotateToken(policy, next, { lockWaitMs: 0 })).toMatchObject({ action: 'rotated', check: 'resumed' });
    expect(world.service.regenerates).toHaveLength(1);
    expect(
      world.destinations.writes.slice(writes).map((w) => w.result),
      'every sink was marked: nothing written again',
    ).toEqual([]);
    await expectSettled(world, next.view, policy);
  });

  it('an operator can finish it without verification (rotate --skip-verify): committed, nothing regenerated', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    world.destinations.corruptWrites('ingest-a');
    await rotateToken(policy, world.process(), { lockWaitMs: 0 });
    world.destinations.heal('ingest-a');

    const operator = world.process();
    const outcome = await rotateToken(policy, operator, { lockWaitMs: 0, force: { reason: 'checked by hand' }, skipVerify: true });
    expect(outcome).toMatchObject({ action: 'rotated', check: 'resumed', verification: { result: 'skipped' } });
    expect(world.service.regenerates).toHaveLength(1);
  });

  it('killed during verification, the next run resumes at verification and never regenerates', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    const dying = world.process({ crashAt: { step: 'verifying' }, lockOnCrash: 'released' });
    await expect(rotateToken(policy, dying, { lockWaitMs: 0 })).rejects.toBeInstanceOf(SimulatedCrash);
    const next = world.process();
    expect(await rotateToken(policy, next, { lockWaitMs: 0 })).toMatchObject({
      action: 'rotated',
      check: 'resumed',
      verification: { result: 'passed' },
    });
    expect(world.service.regenerates).toHaveLength(1);
    await expectSettled(world, next.view, policy);
  });
});

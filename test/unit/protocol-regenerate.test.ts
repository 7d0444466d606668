import { describe, expect, it } from 'vitest';

import { rotateToken } from '../../src/rotation/rotate-token.js';
import { expectNoSecretIn, expectSettled, named, sinkKeys } from '../fakes/expectations.js';
import { openWorld } from '../fakes/fake-deps.js';

const ORPHAN = /ORPHANED TOKEN/g;

describe('the order of the protocol', () => {
  it('journals the intent before the regenerate is sent, and stages the answer before any sink is written', async () => {
    const world = openWorld();
    const { policy, id } = world.token('ingest');
    const observer = world.storage.open();
    const seen: string[] = [];
    world.service.onRegenerate({
      kind: 'answer',
      meanwhile: async () => void seen.push(`regenerate sent with ${(await observer.journal.read('ingest'))?.phase} journalled`),
    });
    world.destinations.duringWrite('ingest-a', async () => {
      const entry = await observer.journal.read('ingest');
      seen.push(`first sink written with ${entry?.phase} journalled, delivered to [${entry?.delivered.join(', ')}]`);
    });
    world.destinations.duringWrite('ingest-b', async () => {
      const entry = await observer.journal.read('ingest');
      seen.push(`second sink written with ${entry?.phase} journalled, delivered to [${entry?.delivered.join(', ')}]`);
    });
    const run = world.process();

    expect(await rotateToken(policy, run, { lockWaitMs: 0 })).toMatchObject({ action: 'rotated', oldId: id, orphans: [] });
    expect(seen).toEqual([
      'regenerate sent with intent journalled',
      'first sink written with staged journalled, delivered to []',
      'second sink written with staged journalled, delivered to [memory:ingest-a]',
    ]);
    expect(run.process.steps).toEqual([
      'intent',
      'regenerated',
      'staged',
      'written',
      'delivered',
      'written',
      'delivered',
      'verifying',
      'committed',
    ]);
    expect(world.service.regenerates).toHaveLength(1);
    await expectSettled(world, run.view, policy);
    expectNoSecretIn(world.logs.text(), world.service);
  });
});

describe('a definite refusal of regenerate', () => {
  it.each([400, 403, 404, 409, 422])(
    '%i changes nothing: sent once, journal cleared, sinks untouched, the failure recorded',
    async (status) => {
      const world = openWorld();
      const { policy, id } = world.token('ingest');
      const expiresAt = world.service.token(id)!.expiresAt;
      world.service.onRegenerate({ kind: 'refuse', status });
      const run = world.process();

      const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
      expect(outcome).toMatchObject({ action: 'failed', oldId: id, orphans: [], error: { code: 'ERR_API' } });
      expect(world.service.regenerates.map((c) => [c.behaviour, c.committed])).toEqual([['refuse', false]]);
      expect(world.service.token(id)!.expiresAt).toEqual(expiresAt);
      expect(await run.journal.read('ingest')).toBeUndefined();
      expect(world.destinations.writes).toEqual([]);
      expect(await run.state.read('ingest')).toMatchObject({ currentId: id, consecutiveFailures: 1, lastFailure: { code: 'ERR_API' } });
    },
  );
});

describe('a regenerate whose outcome is unknown is reconciled, never blindly sent again', () => {
  it('when nothing moved, sending it again is safe: one token minted, no orphan', async () => {
    const world = openWorld();
    const { policy, id } = world.token('ingest');
    world.service.onRegenerate({ kind: 'unknown' });
    const run = world.process();

    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    expect(outcome).toMatchObject({ action: 'rotated', orphans: [] });
    expect(world.service.regenerates.map((c) => [c.id, c.behaviour, c.committed])).toEqual([
      [id, 'unknown', false],
      [id, 'answer', true],
    ]);
    expect(world.logs.text()).toMatch(/did not take effect; sending it again is safe/);
    expect(world.logs.text()).not.toMatch(ORPHAN);
    await expectSettled(world, run.view, policy);
  });

  it('when it moved and the old token still works, the orphan is reported and the name is regenerated again from the old token', async () => {
    const world = openWorld();
    const { policy, id } = world.token('ingest');
    world.service.onRegenerate({ kind: 'lose-answer' });
    const run = world.process();

    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    const [lost, kept] = world.service.committed();
    expect(outcome).toMatchObject({
      action: 'rotated',
      newId: kept!.newId,
      orphans: [{ name: 'ingest', oldId: id, oldTokenWorksUntil: lost!.existingTokenExpiresAt }],
    });
    expect(outcome.orphans[0]).not.toHaveProperty('newId');
    expect([lost!.id, kept!.id], 'both sent for the old token, inside its overlap').toEqual([id, id]);
    expect(world.logs.text().match(ORPHAN)).toHaveLength(1);
    expect(world.logs.text(), 'the second send says why').toMatch(
      /"reason":"the secret of the previous regenerate was lost; expires in 1d/,
    );
    await expectSettled(world, run.view, policy);
    // The orphan exists and works, and no sink has its secret: only reporting it helps.
    const orphan = world.service.token(lost!.newId!)!;
    expect(world.service.works(orphan.secret)).toBe(true);
    for (const key of sinkKeys(policy)) expect(world.destinations.secret(key)).not.toBe(orphan.secret);
    expectNoSecretIn(world.logs.text(), world.service);
  });

  it('when it moved and the old token no longer works, the run fails with ERR_ORPHANED_TOKEN and says what to do', async () => {
    const world = openWorld();
    const { policy, id } = world.token('ingest', { settings: { overlapMs: 0 } });
    world.service.onRegenerate({ kind: 'lose-answer' });
    const run = world.process();

    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    expect(outcome).toMatchObject({
      action: 'failed',
      orphans: [{ oldId: id, oldTokenWorksUntil: undefined }],
      error: {
        code: 'ERR_ORPHANED_TOKEN',
        message: expect.stringMatching(
          /the old token no longer works: nothing is left to rotate from\. Create a new token for 'ingest', put it where its sinks expect it, set its id in the policy, and delete the orphaned token/,
        ),
      },
    });
    expect(world.service.committed()).toHaveLength(1);
    expect(world.service.token(id), 'the old token is gone').toBeUndefined();
    expect(await run.journal.read('ingest')).toBeUndefined();
    expect(world.destinations.writes).toEqual([]);
  });

  it.each(
    named([
      {
        case: 'two lost answers in a row: each is reported, and the third send is kept',
        script: ['lose-answer', 'lose-answer'] as const,
        outcome: { action: 'rotated' },
        orphans: 2,
        committed: 3,
      },
      {
        case: 'three unknown outcomes in a row: the run gives up after the third send, with nothing minted',
        script: ['unknown', 'unknown', 'unknown'] as const,
        outcome: { action: 'failed', error: { code: 'ERR_REGENERATE_OUTCOME_UNKNOWN' } },
        orphans: 0,
        committed: 0,
      },
    ]),
  )('%s', async (_case, { script, outcome, orphans, committed }) => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    world.service.onRegenerate(...script.map((kind) => ({ kind })));
    const run = world.process();

    expect(await rotateToken(policy, run, { lockWaitMs: 0 })).toMatchObject({
      ...outcome,
      orphans: Array(orphans).fill(expect.anything()),
    });
    expect(world.service.regenerates, 'never more than three sends in one run').toHaveLength(3);
    expect(world.service.committed()).toHaveLength(committed);
    expect(await run.journal.read('ingest')).toBeUndefined();
  });

  it('when reconcile itself cannot reach the service, the intent stays journalled and the next run reconciles it first', async () => {
    const world = openWorld();
    const { policy, id } = world.token('ingest');
    // The answer is lost, and so is the service, for the look reconcile takes afterwards.
    world.service.onRegenerate({ kind: 'lose-answer', meanwhile: () => void world.service.onRetrieve({ status: 503 }) });
    const first = world.process();

    expect(await rotateToken(policy, first, { lockWaitMs: 0 })).toMatchObject({ action: 'failed', error: { code: 'ERR_API' } });
    expect(await first.journal.read('ingest')).toMatchObject({ phase: 'intent', oldId: id });
    expect(world.service.committed()).toHaveLength(1);

    const next = world.process();
    const outcome = await rotateToken(policy, next, { lockWaitMs: 0 });
    expect(outcome).toMatchObject({ action: 'rotated', orphans: [{ oldId: id }] });
    expect(next.process.steps[0], 'reconciled before anything else was sent').toBe('intent');
    expect(world.service.committed(id)).toHaveLength(2);
    await expectSettled(world, next.view, policy);
  });

  it('an answer received in time is kept even when the old token stops at once (overlap 0)', async () => {
    const world = openWorld();
    const { policy, id } = world.token('ingest', { settings: { overlapMs: 0 } });
    const run = world.process();
    expect(await rotateToken(policy, run, { lockWaitMs: 0 })).toMatchObject({
      action: 'rotated',
      existingTokenExpiresAt: world.at(0).toISOString(),
    });
    expect(world.service.token(id)).toBeUndefined();
    await expectSettled(world, run.view, policy);
  });
});

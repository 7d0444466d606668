import { describe, expect, it } from 'vitest';

import { wrongBasePath } from '../../src/api/wrong-base-path.js';
import { ApiError } from '../../src/errors.js';
import { reconcile } from '../../src/rotation/reconcile.js';
import { regenerateJournalled } from '../../src/rotation/regenerate-journalled.js';
import { rotateToken } from '../../src/rotation/rotate-token.js';
import { DAY, HOUR, openWorld } from '../fakes/fake-deps.js';
import { intentEntry, rotationContext, stoppedAt } from '../fakes/rotation-context.js';

/*
 * Reconcile: after a regenerate whose answer never came, the old token tells whether the service
 * acted. Judged applied wrongly, a token is reported orphaned that is not, and another regenerate
 * is sent; judged not applied wrongly, a secret nobody has is never reported.
 */

/** A name whose regenerate from its token (expiring in `expiresInMs`, null: never) was sent and its answer lost. */
function unanswered(input: { expiresInMs: number | null; sentInMs?: number }) {
  const world = openWorld();
  const old = world.token('ingest', { expiresInMs: input.expiresInMs });
  const intent = intentEntry({
    name: 'ingest',
    oldId: old.id,
    startedAt: world.at(-5000),
    oldExpiresAt: input.expiresInMs === null ? null : world.at(input.expiresInMs),
    existingTokenExpiresAt: world.at(input.sentInMs ?? HOUR),
    newTokenExpiresAt: world.at(30 * DAY),
  });
  const run = world.process();
  const ctx = rotationContext(old.policy, run);
  return { world, old, intent, run, ctx, token: () => world.service.token(old.id)! };
}

describe('judging whether the lost regenerate took effect', () => {
  it('an old token that still has its own expiry was not regenerated: sending again is safe, nothing is reported', async () => {
    const { ctx, intent, old, world } = unanswered({ expiresInMs: DAY });
    expect(await reconcile(ctx, intent)).toEqual({ applied: false, token: { id: old.id, name: 'ingest', expiresAt: world.at(DAY) } });
    expect(ctx.orphans).toEqual([]);
  });

  it('a never-expiring old token that still never expires was not regenerated: no false orphan', async () => {
    const { ctx, intent, old } = unanswered({ expiresInMs: null });
    expect(await reconcile(ctx, intent)).toEqual({ applied: false, token: { id: old.id, name: 'ingest', expiresAt: null } });
    expect(ctx.orphans).toEqual([]);
  });

  it('a never-expiring old token now stopping at what was sent was regenerated: an orphan, and the old token still works', async () => {
    const { ctx, intent, old, world, token } = unanswered({ expiresInMs: null });
    token().expiresAt = world.at(HOUR);
    const verdict = await reconcile(ctx, intent);
    const report = {
      name: 'ingest',
      oldId: old.id,
      regeneratedAt: intent.startedAt,
      detectedAt: world.clock.now().toISOString(),
      oldTokenWorksUntil: world.at(HOUR).toISOString(),
    };
    expect(verdict).toEqual({ applied: true, token: { id: old.id, name: 'ingest', expiresAt: world.at(HOUR) }, report });
    expect(ctx.orphans).toEqual([report]);
  });

  it('an old token the service no longer knows was regenerated: an orphan, and nothing works to rotate from', async () => {
    const { ctx, intent, old, world } = unanswered({ expiresInMs: DAY });
    world.service.onRetrieve({ id: old.id, status: 404 });
    const verdict = await reconcile(ctx, intent);
    expect(verdict).toEqual({ applied: true, token: undefined, report: expect.objectContaining({ oldId: old.id }) });
    expect(verdict).toMatchObject({ report: { oldTokenWorksUntil: undefined } });
    expect(ctx.orphans).toHaveLength(1);
  });

  it('an old token whose expiry moved elsewhere than sent or before was regenerated (by someone): an orphan is reported', async () => {
    const { ctx, intent, world, token } = unanswered({ expiresInMs: DAY });
    token().expiresAt = world.at(3 * HOUR);
    expect(await reconcile(ctx, intent)).toMatchObject({ applied: true, token: { expiresAt: world.at(3 * HOUR) } });
    expect(ctx.orphans).toHaveLength(1);
  });

  it('an old token that now never expires, though it had an expiry, was regenerated: it works, and works until never (null, not gone)', async () => {
    const { ctx, intent, world, token } = unanswered({ expiresInMs: DAY });
    token().expiresAt = null;
    const verdict = await reconcile(ctx, intent);
    expect(verdict).toMatchObject({ applied: true, token: { expiresAt: null } });
    expect(verdict.applied && verdict.report.oldTokenWorksUntil).toBeNull();
    expect(world.service.regenerates).toEqual([]);
  });

  it.each([
    ['stopped exactly now', 0],
    ['stopped an hour ago', -HOUR],
  ])('an old token still retrievable that %s is not treated as working: nothing to regenerate from', async (_what, offset) => {
    // An emergency rotation sent "stop now"; the service applied it and still answers for the old token.
    const { ctx, intent, world, token } = unanswered({ expiresInMs: DAY, sentInMs: offset });
    const stopped = world.at(offset);
    token().expiresAt = stopped;
    const lookup = { ...ctx.deps, api: { ...ctx.deps.api, retrieve: async (id: string) => ({ id, name: 'ingest', expiresAt: stopped }) } };
    const verdict = await reconcile({ ...ctx, deps: lookup }, intent);
    expect(verdict).toEqual({
      applied: true,
      token: undefined,
      report: expect.objectContaining({ oldTokenWorksUntil: stopped.toISOString() }),
    });
  });

  it('a failed lookup other than a 404 throws: the intent stays journalled, and nothing is judged', async () => {
    const { ctx, intent, old, world } = unanswered({ expiresInMs: DAY });
    world.service.onRetrieve({ id: old.id, status: 503 });
    const error = await reconcile(ctx, intent).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(503);
    expect(ctx.orphans).toEqual([]);
  });

  it('a 404 that never reached the API (a web page: a wrong base path) throws: the token is not taken as gone, no orphan', async () => {
    const { ctx, intent } = unanswered({ expiresInMs: DAY });
    const missed = wrongBasePath('http://127.0.0.1:1/api', 'the token service answered 404 with a web page', 'retrieve');
    const lookup = { ...ctx.deps, api: { ...ctx.deps.api, retrieve: () => Promise.reject(missed) } };
    await expect(reconcile({ ...ctx, deps: lookup }, intent)).rejects.toBe(missed);
    expect(ctx.orphans).toEqual([]);
  });

  it('a stop at the deadline gives up the lookup: nothing is judged, the intent stays for the next run', async () => {
    const { ctx, intent, run } = unanswered({ expiresInMs: DAY });
    const stop = new AbortController();
    const stopped = { ...ctx, deps: { ...run, api: stoppedAt(run.api, stop, { op: 'retrieve', call: 1 }) }, signal: stop.signal };
    await expect(reconcile(stopped, intent)).rejects.toThrow('deadline');
    expect(ctx.orphans).toEqual([]);
  });
});

describe('through the journalled regenerate', () => {
  it('a never-expiring token whose first regenerate was lost before the service acted is regenerated once more, with no orphan', async () => {
    const world = openWorld();
    const { policy, id } = world.token('ingest', { expiresInMs: null });
    world.service.onRegenerate({ kind: 'unknown' });
    const run = world.process();
    const ctx = rotationContext(policy, run);
    const token = await world.service.retrieve(id);
    const regenerated = await regenerateJournalled(ctx, { token, reason: 'due', overlapMs: HOUR });
    expect(world.service.regenerates.map((r) => [r.id, r.committed])).toEqual([
      [id, false],
      [id, true],
    ]);
    expect(regenerated).toMatchObject({ kind: 'staged', entry: { oldId: id, reason: 'due' } });
    expect(ctx.orphans).toEqual([]);
  });

  it('a never-expiring token resumed from an intent that never reached the service rotates with one regenerate and no orphan', async () => {
    const world = openWorld();
    const { policy, id } = world.token('ingest', { expiresInMs: null, settings: { maxAgeMs: 365 * DAY } });
    // Crashed once the intent was journalled, before the regenerate went out.
    const crashed = await rotateToken(policy, world.process({ crashAt: { step: 'intent' }, lockOnCrash: 'released' }), {
      lockWaitMs: 0,
      force: { reason: 'by hand' },
    }).catch((e: unknown) => e);
    expect(crashed).toMatchObject({ name: 'SimulatedCrash', step: 'intent' });
    expect(world.service.regenerates).toEqual([]);

    const outcome = await rotateToken(policy, world.process(), { lockWaitMs: 0, force: { reason: 'by hand' } });
    expect(outcome).toMatchObject({ action: 'rotated', oldId: id, orphans: [] });
    expect(world.service.regenerates).toHaveLength(1);
  });
});

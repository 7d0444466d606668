import type { ServiceToken } from '../api/service-token.js';
import type { TokenPolicy } from '../config/types.js';
import { decide } from '../policy/decide.js';
import type { JournalEntry } from '../state/journal-entry.js';
import { historyOf, resolveLineage } from '../state/lineage.js';
import type { RotationContext } from './context.js';
import type { RotationDeps } from './deps.js';
import { finishRotation } from './finish-rotation.js';
import { errorSummary, iso, type TokenOutcome } from './outcome.js';
import { reconcile } from './reconcile.js';
import { orphanedWithoutWayBack, regenerateJournalled } from './regenerate-journalled.js';

export interface RotateOptions {
  signal?: AbortSignal;
  /** How long to wait for another process rotating the same name before skipping it. */
  lockWaitMs?: number;
}

const DEFAULT_LOCK_WAIT_MS = 2000;

/**
 * One name, under its lock, by the crash-safe protocol: first finish what an earlier run left in
 * the journal, then check, and when due regenerate (intent journalled), stage, deliver, commit.
 */
export async function rotateToken(policy: TokenPolicy, deps: RotationDeps, options: RotateOptions = {}): Promise<TokenOutcome> {
  const ctx: RotationContext = { policy, deps, log: deps.logger.child({ tokenName: policy.name }), signal: options.signal, orphans: [] };
  const base = { name: policy.name, oldId: policy.id, expiresAt: null as string | null, sinks: [], orphans: ctx.orphans };

  let lock;
  try {
    lock = await deps.locks.acquire(policy.name, { waitMs: options.lockWaitMs ?? DEFAULT_LOCK_WAIT_MS });
  } catch (error) {
    return { ...base, action: 'failed', reason: errorSummary(error).message, error: errorSummary(error) };
  }
  if ('busy' in lock) {
    const who = lock.busy ? `pid ${lock.busy.pid} on ${lock.busy.host} since ${lock.busy.acquiredAt}` : 'another process';
    ctx.log.warn({ step: 'check', owner: lock.busy }, 'another token-rotator is rotating this name; skipped');
    return { ...base, action: 'skipped', check: 'busy', reason: `another token-rotator (${who}) is rotating it` };
  }

  try {
    return await rotateLocked(ctx);
  } catch (error) {
    ctx.log.error({ err: error }, 'rotation failed');
    const summary = errorSummary(error);
    const { token } = ctx;
    return { ...base, oldId: token?.id ?? policy.id, expiresAt: token ? iso(token.expiresAt) : null, action: 'failed', reason: summary.message, error: summary };
  } finally {
    await lock.held.release().catch((error: unknown) => ctx.log.warn({ err: error }, 'releasing the lock failed'));
  }
}

async function rotateLocked(ctx: RotationContext): Promise<TokenOutcome> {
  const { deps, policy, log } = ctx;
  const lineage = resolveLineage(policy, await deps.state.read(policy.name), deps.clock.now());
  const record = lineage.record;
  await deps.journal.removeLeftovers(policy.name);
  const entry = await deps.journal.read(policy.name);

  if (entry?.phase === 'staged') {
    log.warn({ step: 'resume', oldId: entry.oldId, newId: entry.staged!.newId }, 'finishing an interrupted rotation without regenerating');
    const { sinks, pending } = await finishRotation(ctx, entry, record);
    return rotatedOutcome(ctx, entry, sinks, pending, 'resumed', `finished an interrupted rotation (${entry.reason})`);
  }

  let token: ServiceToken;
  let forcedReason: string | undefined;
  if (entry?.phase === 'intent') {
    // An earlier run sent, or was about to send, a regenerate and never learned the answer.
    log.warn({ step: 'resume', oldId: entry.oldId }, 'an earlier regenerate has no known outcome; reconciling');
    const verdict = await reconcile(ctx, entry);
    await deps.journal.erase(policy.name);
    if (verdict.applied && !verdict.token) throw orphanedWithoutWayBack(policy.name, entry);
    token = verdict.token!;
    if (verdict.applied) forcedReason = `the secret of an interrupted regenerate was lost; ${entry.reason}`;
  } else {
    if (lineage.adopted === 'repointed') log.warn({ id: record.currentId }, "the policy id is not in this name's lineage; adopting it");
    token = await deps.api.retrieve(record.currentId, { signal: ctx.signal });
  }
  ctx.token = token;

  const decision = forcedReason
    ? { action: 'rotate' as const, check: undefined, reason: forcedReason }
    : decide({ token, history: historyOf(record), settings: policy.settings, now: deps.clock.now() });
  log.info({ step: 'check', id: token.id, expiresAt: iso(token.expiresAt), action: decision.action, reason: decision.reason }, 'checked');
  if (decision.action === 'skip') {
    if (lineage.adopted || record.expiresAt !== iso(token.expiresAt)) await deps.state.write({ ...record, expiresAt: iso(token.expiresAt) });
    return { name: policy.name, action: 'skipped', check: decision.check!, reason: decision.reason, oldId: token.id, expiresAt: iso(token.expiresAt), sinks: [], orphans: ctx.orphans };
  }

  const { entry: staged, secret } = await regenerateJournalled(ctx, { token, reason: decision.reason, overlapMs: policy.settings.overlapMs });
  const { sinks, pending } = await finishRotation(ctx, staged, record, secret);
  return rotatedOutcome(ctx, staged, sinks, pending, decision.check, decision.reason, token);
}

function rotatedOutcome(
  ctx: RotationContext,
  entry: JournalEntry,
  sinks: TokenOutcome['sinks'],
  pending: string[],
  check: TokenOutcome['check'],
  reason: string,
  token?: ServiceToken,
): TokenOutcome {
  const outcome: TokenOutcome = {
    name: ctx.policy.name,
    action: 'rotated',
    check,
    reason,
    oldId: entry.oldId,
    expiresAt: token ? iso(token.expiresAt) : entry.oldExpiresAt,
    newId: entry.staged!.newId,
    newExpiresAt: entry.staged!.newExpiresAt,
    existingTokenExpiresAt: entry.existingTokenExpiresAt,
    sinks,
    orphans: ctx.orphans,
  };
  if (pending.length === 0) return outcome;
  const message = `rotated, but not yet delivered to ${pending.join(', ')}; the secret stays staged and the next run delivers it without regenerating`;
  return { ...outcome, action: 'failed', pending, error: { code: 'ERR_SINK', message } };
}

import type { ServiceToken } from '../api/service-token.js';
import type { TokenPolicy } from '../config/types.js';
import { backoffUntil } from '../policy/backoff.js';
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
  /** Leave a name alone while it backs off after failures (the daemon's scheduled checks). */
  respectBackoff?: boolean;
  /** Rotate now whatever the policy says (emergency rotation), optionally with another overlap. */
  force?: { reason: string; overlapMs?: number };
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
    let outcome: TokenOutcome;
    try {
      outcome = await rotateLocked(ctx, options);
    } catch (error) {
      ctx.log.error({ err: error }, 'rotation failed');
      const summary = errorSummary(error);
      const { token } = ctx;
      outcome = {
        ...base,
        oldId: token?.id ?? policy.id,
        expiresAt: token ? iso(token.expiresAt) : null,
        action: 'failed',
        reason: summary.message,
        error: summary,
      };
    }
    await recordAttempt(ctx, outcome).catch((error: unknown) => ctx.log.warn({ err: error }, 'recording the attempt failed'));
    return outcome;
  } finally {
    await lock.held.release().catch((error: unknown) => ctx.log.warn({ err: error }, 'releasing the lock failed'));
  }
}

/** The failure count behind backoff and `status`: bumped by a failure, reset by anything else. */
async function recordAttempt(ctx: RotationContext, outcome: TokenOutcome): Promise<void> {
  if (outcome.check === 'backoff') return;
  const { deps, policy } = ctx;
  const failed = outcome.action === 'failed';
  let existing;
  try {
    existing = await deps.state.read(policy.name);
  } catch {
    return; // a damaged record was reported already, and must stay as it is for the operator
  }
  if (!existing && !failed) return;
  const record = existing ?? resolveLineage(policy, undefined, deps.clock.now()).record;
  if (!failed && record.consecutiveFailures === 0) return;
  await deps.state.write(
    failed
      ? {
          ...record,
          consecutiveFailures: record.consecutiveFailures + 1,
          lastFailure: { at: deps.clock.now().toISOString(), code: outcome.error?.code ?? 'ERR_UNEXPECTED', message: outcome.reason },
        }
      : { ...record, consecutiveFailures: 0 },
  );
}

async function rotateLocked(ctx: RotationContext, options: RotateOptions): Promise<TokenOutcome> {
  const { deps, policy, log } = ctx;
  let lineage = resolveLineage(policy, await deps.state.read(policy.name), deps.clock.now());
  await deps.journal.removeLeftovers(policy.name);
  const entry = await deps.journal.read(policy.name);

  if (entry?.phase === 'staged') {
    log.warn({ step: 'resume', oldId: entry.oldId, newId: entry.staged!.newId }, 'finishing an interrupted rotation without regenerating');
    const { sinks, pending } = await finishRotation(ctx, entry, lineage.record);
    const finished = rotatedOutcome(ctx, entry, sinks, pending, 'resumed', `finished an interrupted rotation (${entry.reason})`);
    // An emergency rotation goes on from the token just delivered: it may be the leaked one.
    if (!options.force || pending.length > 0) return finished;
    lineage = resolveLineage(policy, await deps.state.read(policy.name), deps.clock.now());
  } else if (!entry && options.respectBackoff && !options.force) {
    const until = backoffUntil({
      consecutiveFailures: lineage.record.consecutiveFailures,
      lastFailureAt: lineage.record.lastFailure ? new Date(lineage.record.lastFailure.at) : null,
    });
    if (until && until > deps.clock.now()) {
      const reason = `backing off after ${lineage.record.consecutiveFailures} failed attempt(s) until ${until.toISOString()}`;
      log.info({ step: 'check', reason }, 'backing off');
      return {
        name: policy.name,
        action: 'skipped',
        check: 'backoff',
        reason,
        oldId: lineage.record.currentId,
        expiresAt: lineage.record.expiresAt,
        sinks: [],
        orphans: ctx.orphans,
      };
    }
  }
  const record = lineage.record;

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

  const decision = options.force
    ? { action: 'rotate' as const, check: 'manual' as const, reason: `manual rotation: ${options.force.reason}` }
    : forcedReason
      ? { action: 'rotate' as const, check: undefined, reason: forcedReason }
      : decide({ token, history: historyOf(record), settings: policy.settings, now: deps.clock.now() });
  log.info({ step: 'check', id: token.id, expiresAt: iso(token.expiresAt), action: decision.action, reason: decision.reason }, 'checked');
  if (decision.action === 'skip') {
    if (lineage.adopted || record.expiresAt !== iso(token.expiresAt))
      await deps.state.write({ ...record, expiresAt: iso(token.expiresAt) });
    return {
      name: policy.name,
      action: 'skipped',
      check: decision.check!,
      reason: decision.reason,
      oldId: token.id,
      expiresAt: iso(token.expiresAt),
      sinks: [],
      orphans: ctx.orphans,
    };
  }

  const overlapMs = options.force?.overlapMs ?? policy.settings.overlapMs;
  const { entry: staged, secret } = await regenerateJournalled(ctx, { token, reason: decision.reason, overlapMs });
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

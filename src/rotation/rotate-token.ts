import { skewWorthRecording } from '../api/service-clock.js';
import type { ServiceToken } from '../api/service-token.js';
import {
  LockLostError,
  NameLockedError,
  OrphanedTokenError,
  RegenerateAnswerUnusableError,
  type RotatorError,
  SecretHeldError,
  sharedFailure,
  SinkError,
  StagingFailedError,
  StateIntegrityError,
  StateKeyError,
  UNEXPECTED_ERROR_CODE,
  VerifyFailedError,
} from '../errors.js';
import { backoffUntil } from '../policy/backoff.js';
import { describeDrift } from '../policy/sink-drift.js';
import { needsAuthenticating } from '../state/authenticated-state.js';
import { rotationIdOf, type StagedEntry } from '../state/journal-entry.js';
import { resolveLineage, withAdoptedSinks } from '../state/lineage.js';
import type { LockHolder } from '../state/name-locks.js';
import type { StateRecord } from '../state/state-record.js';
import { assessToken, decideFor, lineageFor, reclaimRecorded, snapshotSinks } from './assess-token.js';
import type { RotationContext } from './context.js';
import { storedCurrentSecret } from './current-secret.js';
import { type RotationDeps, SimulatedCrash, stateKeysOf } from './deps.js';
import { endEarlierTokens } from './end-earlier-tokens.js';
import { type DeliveryResult, finishRotation } from './finish-rotation.js';
import { stageHeldSecret } from './held-secret.js';
import { entryTrust, journalStep } from './journal-step.js';
import { errorSummary, iso, type TokenOutcome } from './outcome.js';
import { preflightSinks } from './preflight-sinks.js';
import { reconcile } from './reconcile.js';
import { redeliver } from './redeliver.js';
import { heldSecretError, orphanedWithoutWayBack, regenerateJournalled } from './regenerate-journalled.js';
import { RotationStopped } from './shutdown.js';
import type { TokenSpec } from './token-spec.js';
import { deliverUnjournalled } from './unjournalled-delivery.js';
import { rememberingWrites } from './written-record.js';

export interface RotateOptions {
  /** Aborted at a stop's deadline: what still waits on the network is given up (never a regenerate sent). */
  signal?: AbortSignal;
  /** Aborted when a stop is asked: no regenerate is sent any more (see `rotation/shutdown.ts`). */
  stopping?: AbortSignal;
  /** How long to wait for another process rotating the same name before giving up on it. */
  lockWaitMs?: number;
  /** Leave a name alone while it backs off after failures (the daemon's scheduled checks). */
  respectBackoff?: boolean;
  /** Rotate now whatever the policy says (emergency rotation), optionally with another overlap. */
  force?: { reason: string; overlapMs?: number };
  /**
   * The id an operator found, in the service's console, for a secret held in the journal: it is
   * confirmed with the service, then the held secret is delivered and committed as that token.
   */
  heldId?: string;
  /**
   * Finish a staged rotation whose verification failed without verifying it, after a human checked
   * the new token (`rotate NAME --skip-verify`). Nothing new is regenerated.
   */
  skipVerify?: boolean;
}

const DEFAULT_LOCK_WAIT_MS = 2000;
/** How long a check whose sinks lack the current secret waits for another process's check of the name. */
const REDELIVERY_LOCK_WAIT_MS = 20_000;
/** The longest last-failure message kept in state: enough to act on, never a dump. */
const MAX_FAILURE_MESSAGE = 500;

/**
 * One name, under its lock, by the crash-safe protocol: first finish what an earlier run left in
 * the journal, then check, and when due regenerate (intent journalled), stage, deliver, commit.
 */
export async function rotateToken(policy: TokenSpec, deps: RotationDeps, options: RotateOptions = {}): Promise<TokenOutcome> {
  const log = deps.logger.child({ tokenName: policy.name });
  const base = { name: policy.name, oldId: policy.id, expiresAt: null as string | null, sinks: [] };

  let lock;
  try {
    lock = await deps.locks.acquire(policy.name, { waitMs: options.lockWaitMs ?? DEFAULT_LOCK_WAIT_MS });
    if ('busy' in lock) {
      const busy = await busyOutcome(policy, deps, log, lock.busy, options.signal);
      if (busy !== 'redeliver') return interruptedIfStopped(busy, options, log);
      // A sink here lacks the current secret (a new pod's empty volume): the holder is another
      // pod's check, over in moments; waiting for it beats leaving this pod's app without its file.
      lock = await deps.locks.acquire(policy.name, { waitMs: REDELIVERY_LOCK_WAIT_MS });
      if ('busy' in lock) return interruptedIfStopped(await busyOutcome(policy, deps, log, lock.busy, options.signal, true), options, log);
    }
  } catch (error) {
    return { ...base, orphans: [], action: 'failed', stage: 'check', reason: errorSummary(error).message, error: errorSummary(error) };
  }

  const written = rememberingWrites(deps.state);
  const ctx: RotationContext = {
    policy,
    deps: { ...deps, state: written.state },
    log,
    signal: options.signal,
    stopping: options.stopping,
    stage: 'check',
    lock: lock.held,
    orphans: [],
  };
  try {
    let outcome: TokenOutcome;
    try {
      outcome = await rotateLocked(ctx, options);
    } catch (error) {
      if (error instanceof SimulatedCrash) throw error;
      const summary = errorSummary(error);
      const { token } = ctx;
      outcome = {
        ...base,
        orphans: ctx.orphans,
        oldId: token?.id ?? ctx.askedId ?? policy.id,
        expiresAt: token ? iso(token.expiresAt) : null,
        action: 'failed',
        stage: ctx.stage,
        reason: summary.message,
        error: summary,
      };
      if (error instanceof RotationStopped) {
        ctx.log.warn({ step: 'regenerate' }, error.message);
        const { error: _refusal, ...rest } = outcome;
        outcome = { ...rest, action: 'interrupted', reason: error.message };
      } else if (sharedFailure(error)) {
        // Every name gets this same failure; the command says it once, with what to check.
        ctx.log.warn({ causeClass: (error as RotatorError).causeClass }, `not checked: ${summary.message}`);
      } else if (!interruptible(options, outcome)) {
        ctx.log.error({ err: error }, 'rotation failed');
      }
    }
    if (outcome.action === 'failed' && !outcome.stage) outcome = { ...outcome, stage: ctx.stage };
    outcome = interruptedIfStopped(outcome, options, ctx.log);
    // A process that lost the lock must not write what the new holder owns.
    if (outcome.error?.code !== LockLostError.code) {
      await recordAttempt(ctx, outcome, written.lastWritten()).catch((error: unknown) =>
        ctx.log.warn({ err: error }, 'recording the attempt failed'),
      );
    }
    return outcome;
  } finally {
    await lock.held.release().catch((error: unknown) => ctx.log.warn({ err: error }, 'releasing the lock failed'));
  }
}

/**
 * Failures that mean something was lost, is held or belongs to another holder: said as they are even
 * when a stop came at the same time.
 */
const NEVER_INTERRUPTED = new Set<string | undefined>([
  OrphanedTokenError.code,
  SecretHeldError.code,
  StagingFailedError.code,
  RegenerateAnswerUnusableError.code,
  LockLostError.code,
]);

/** A failure that happened once the stop's deadline had aborted what was waiting: the stop's doing. */
function interruptible(options: RotateOptions, outcome: TokenOutcome): boolean {
  if (outcome.action !== 'failed' || options.signal?.aborted !== true) return false;
  // Stryker disable next-line OptionalChaining: every failed outcome carries its error
  return !NEVER_INTERRUPTED.has(outcome.error?.code);
}

/**
 * A failed outcome caused by the stop becomes `interrupted`: no failure is recorded, counted or
 * notified for it. A staged secret stays staged (the next run delivers it), an intent stays
 * journalled (the next run reconciles it).
 */
function interruptedIfStopped(outcome: TokenOutcome, options: RotateOptions, log: RotationContext['log']): TokenOutcome {
  if (!interruptible(options, outcome)) return outcome;
  const { error: _aborted, ...rest } = outcome;
  const reason = outcome.pending?.length
    ? `rotated, delivery to ${outcome.pending.join(', ')} interrupted by the stop; the secret stays staged and the next run delivers it without regenerating`
    : outcome.stage === 'rotation'
      ? 'its rotation was interrupted by the stop; the next run finishes it from the journal'
      : 'its check was interrupted by the stop; the next run checks it again';
  log.warn({ step: outcome.stage, cause: outcome.error?.message }, reason);
  return { ...rest, action: 'interrupted', reason };
}

/** What a busy name is judged by: the name, who holds it, and the stop. */
type BusyCheck = [
  policy: TokenSpec,
  deps: RotationDeps,
  log: RotationContext['log'],
  owner: LockHolder | undefined,
  signal: AbortSignal | undefined,
];
/**
 * Another process holds the name. That is fine when nothing is due; when the name is due (or has an
 * unfinished rotation) this run did not do its job, and says so rather than exit 0. `redeliver`: a
 * sink lacks the current secret, worth a longer wait; once `waited` that long, a failure.
 */
async function busyOutcome(...args: [...BusyCheck, waited: true]): Promise<TokenOutcome>;
async function busyOutcome(...args: BusyCheck): Promise<TokenOutcome | 'redeliver'>;
async function busyOutcome(
  ...[policy, deps, log, owner, signal, waited = false]: [...BusyCheck, waited?: boolean]
): Promise<TokenOutcome | 'redeliver'> {
  const who = owner ? `${owner.who} since ${owner.since}` : 'another process';
  const base = { name: policy.name, oldId: policy.id, expiresAt: null as string | null, sinks: [], orphans: [], check: 'busy' as const };
  const asked: { id?: string } = {};
  const failed = (message: string): TokenOutcome => {
    if (!signal?.aborted) log.error({ step: 'check', owner }, message);
    const oldId = asked.id ?? policy.id;
    return { ...base, oldId, action: 'failed', stage: 'check', reason: message, error: errorSummary(new NameLockedError(message)) };
  };
  try {
    const unfinished = await deps.journal.read(policy.name);
    if (unfinished) return failed(`another token-rotator (${who}) holds its lock, with an unfinished rotation of it (${unfinished.phase})`);
    const { token, decision, sinks } = await assessToken(policy, deps, { ...(signal ? { signal } : {}), asked });
    if (decision.action === 'redeliver' && !waited) return 'redeliver';
    if (decision.action === 'redeliver') {
      return {
        ...failed(`a sink lacks the current secret, but another token-rotator (${who}) held its lock throughout`),
        oldId: token.id,
        expiresAt: iso(token.expiresAt),
        drift: sinks.drift,
      };
    }
    if (decision.action === 'rotate') {
      return {
        ...failed(`due (${decision.reason}), but another token-rotator (${who}) holds its lock`),
        oldId: token.id,
        expiresAt: iso(token.expiresAt),
      };
    }
    log.info({ step: 'check', owner }, 'another token-rotator holds this name; it is not due');
    return {
      ...base,
      action: 'skipped',
      reason: `not due; another token-rotator (${who}) holds its lock`,
      oldId: token.id,
      expiresAt: iso(token.expiresAt),
    };
  } catch (error) {
    return failed(`another token-rotator (${who}) holds its lock, and checking whether it is due failed: ${errorSummary(error).message}`);
  }
}

/**
 * The failure count behind backoff and `status`: bumped by a failure, reset by anything else.
 * `lastWritten`: the record this rotation last wrote for the name, under its lock.
 */
async function recordAttempt(ctx: RotationContext, outcome: TokenOutcome, lastWritten: StateRecord | undefined): Promise<void> {
  // Neither a failure nor a success: the next run does what this one was stopped from doing.
  if (outcome.check === 'backoff' || outcome.action === 'interrupted') return;
  // State this run's keys cannot open or do not vouch for is left exactly as it is: a record
  // written now would be authenticated by a key that is not the state's own.
  if (outcome.error?.code === StateKeyError.code || outcome.error?.code === StateIntegrityError.code) return;
  const { deps, policy } = ctx;
  const failed = outcome.action === 'failed';
  // A success that wrote a record without failures (a commit): the record read back would be that
  // one, with nothing to reset. Not read again, parsed and authenticated for nothing.
  if (!failed && lastWritten?.consecutiveFailures === 0) return;
  let existing;
  try {
    existing = await deps.state.read(policy.name);
  } catch {
    return; // a damaged record was reported already, and must stay as it is for the operator
  }
  // A name without a record is one with no failures: a success has nothing to reset.
  const record = existing ?? resolveLineage(policy, undefined, deps.clock.now()).record;
  if (!failed && record.consecutiveFailures === 0) return;
  // What went wrong, not why a rotation was attempted: a sink's own error when a delivery failed.
  const sinkErrors = outcome.sinks.filter((s) => s.result === 'failed').map((s) => s.error);
  const why = sinkErrors.length > 0 ? sinkErrors.join('; ') : (outcome.error?.message ?? outcome.reason);
  const message = why.length > MAX_FAILURE_MESSAGE ? `${why.slice(0, MAX_FAILURE_MESSAGE)}…` : why;
  await deps.state.write(
    failed
      ? {
          ...record,
          consecutiveFailures: record.consecutiveFailures + 1,
          // Stryker disable next-line OptionalChaining: every failed outcome carries its error
          lastFailure: { at: deps.clock.now().toISOString(), code: outcome.error?.code ?? UNEXPECTED_ERROR_CODE, message },
        }
      : { ...record, consecutiveFailures: 0 },
  );
}

async function rotateLocked(ctx: RotationContext, options: RotateOptions): Promise<TokenOutcome> {
  const { deps, policy, log } = ctx;
  await deps.journal.removeLeftovers(policy.name);
  const [existing, read, unfinished] = await Promise.all([
    deps.state.read(policy.name),
    snapshotSinks(policy, deps, ctx.signal),
    deps.journal.read(policy.name),
  ]);
  const snapshot = await reclaimRecorded(policy, deps, read, existing, ctx.signal);
  let entry = unfinished;
  // An unfinished rotation may have written some sinks already: what they say is not yet the
  // truth of the state, so with a journal entry the lineage is never recovered from them.
  // Stryker disable next-line ArrayDeclaration: lineageFor keeps only metas with a token id, which a string has not
  let lineage = lineageFor(policy, existing, entry ? { ...snapshot, metas: [] } : snapshot, deps.clock.now());
  if (lineage.adopted === 'recovered') {
    log.warn(
      { step: 'check', id: lineage.record.currentId, policyId: policy.id },
      "no state record for this name: its current id comes from the sinks' metadata (the newest rotation they know of)",
    );
  }

  // Before anything of the entry is used: it must continue this name's lineage.
  const step = journalStep(entry, lineage.record, entryTrust(policy.id, deps.stateKey, entry));
  if (entry?.phase === 'held') {
    if (!options.heldId) {
      throw heldSecretError(policy.name, entry.oldId, entry.held.problem, deps.journal.describe(policy.name), entry.existingTokenExpiresAt);
    }
    ctx.stage = 'rotation';
    const staged = await stageHeldSecret(ctx, entry, options.heldId);
    const delivery = await finishRotation(ctx, staged, lineage.record, undefined, { skipVerify: options.skipVerify });
    return rotatedOutcome(ctx, staged, delivery, 'resumed', `delivered the held secret as ${options.heldId}, an id given by an operator`);
  }
  if (step.kind === 'erase-committed') {
    log.warn(
      { step: 'resume', oldId: step.entry.oldId, newId: lineage.record.currentId },
      'an intent left behind was already committed; erasing it',
    );
    await deps.journal.erase(policy.name);
    entry = undefined;
  }

  if (options.skipVerify && entry?.phase !== 'staged') {
    const reason = 'nothing staged to finish: --skip-verify only finishes a rotation whose new token failed verification';
    return {
      name: policy.name,
      action: 'failed',
      reason,
      oldId: lineage.record.currentId,
      expiresAt: lineage.record.expiresAt,
      sinks: [],
      orphans: [],
      error: { code: VerifyFailedError.code, message: reason },
    };
  }
  if (entry?.phase === 'staged') {
    ctx.stage = 'rotation';
    log.warn({ step: 'resume', oldId: entry.oldId, newId: entry.staged.newId }, 'finishing an interrupted rotation without regenerating');
    const delivery = await finishRotation(ctx, entry, lineage.record, undefined, { skipVerify: options.skipVerify });
    const finished = rotatedOutcome(ctx, entry, delivery, 'resumed', `finished an interrupted rotation (${entry.reason})`);
    // An emergency rotation goes on from the token just delivered: it may be the leaked one. Not
    // after --skip-verify, which only finishes what is staged, nor when it is not committed.
    if (!options.force || options.skipVerify || finished.action !== 'rotated') return finished;
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
    ctx.stage = 'rotation';
    log.warn({ step: 'resume', oldId: entry.oldId }, 'an earlier regenerate has no known outcome; reconciling');
    ctx.askedId = entry.oldId;
    const verdict = await reconcile(ctx, entry);
    await deps.journal.erase(policy.name);
    if (verdict.applied && !verdict.token) throw orphanedWithoutWayBack(policy.name, entry);
    token = verdict.token!;
    if (verdict.applied) forcedReason = `the secret of an interrupted regenerate was lost; ${entry.reason}`;
  } else {
    if (lineage.adopted === 'repointed') log.warn({ id: record.currentId }, "the policy id is not in this name's lineage; adopting it");
    ctx.askedId = record.currentId;
    token = await deps.api.retrieve(record.currentId, { signal: ctx.signal });
  }
  ctx.token = token;

  const now = deps.clock.now();
  const checked = decideOrForce(ctx, lineage, token, snapshot, options);
  const decision = options.force
    ? { action: 'rotate' as const, check: 'manual' as const, reason: `manual rotation: ${options.force.reason}` }
    : forcedReason
      ? { action: 'rotate' as const, check: undefined, reason: forcedReason }
      : checked.decision;
  const { drift, adopt } = checked.sinks;
  const { current } = checked;
  log.info({ step: 'check', id: token.id, expiresAt: iso(token.expiresAt), action: decision.action, reason: decision.reason }, 'checked');
  if (drift.length > 0)
    log.warn({ step: 'drift', drift }, `a sink does not hold the current secret: ${drift.map(describeDrift).join('; ')}`);
  const reason =
    lineage.adopted === 'recovered' ? `${decision.reason} (current id ${token.id} recovered from the sinks' metadata)` : decision.reason;
  const found = drift.length > 0 ? { drift } : {};
  if (decision.action === 'skip') {
    if (adopt.length > 0) log.info({ step: 'adopt', sinks: adopt.map((a) => a.sink) }, 'adopted what the sinks hold as the current secret');
    const adopted = withAdoptedSinks({ ...record, expiresAt: iso(token.expiresAt) }, policy.sinks.map(deps.sinks.target), adopt, now);
    // An adopted secret, or one sealed by a previous key, is stored as the current key seals it; a
    // record that key does not authenticate yet is written again with its MAC.
    const next =
      // Stryker disable next-line LogicalOperator: a secret already stored as the current key stores it would be stored the same
      current.known && current.store
        ? { ...adopted, secret: storedCurrentSecret(record.name, record.currentId, current, stateKeysOf(deps)) }
        : adopted;
    const changed =
      lineage.adopted ||
      adopt.length > 0 ||
      (current.known && current.store) ||
      needsAuthenticating(record) ||
      record.sinks === undefined ||
      record.expiresAt !== iso(token.expiresAt) ||
      skewWorthRecording(record.serviceClock, deps.clockOffsetMs?.());
    if (changed) await deps.state.write(next);
    return {
      name: policy.name,
      action: 'skipped',
      check: decision.check!,
      reason,
      oldId: token.id,
      expiresAt: iso(token.expiresAt),
      sinks: [],
      orphans: ctx.orphans,
      ...found,
    };
  }

  if (decision.action === 'redeliver' && current.known) {
    return redeliver(ctx, record, token, current, drift, adopt, reason);
  }

  // Step 2: no new token unless every sink can take it.
  await preflightSinks(ctx, record, drift);
  const overlapMs = options.force?.overlapMs ?? policy.settings.overlapMs;
  const regenerated = await regenerateJournalled(ctx, { token, reason, overlapMs });
  let outcome: TokenOutcome;
  if (regenerated.kind === 'unjournalled') {
    const result = await deliverUnjournalled(ctx, regenerated.entry, regenerated.secret, regenerated.cause, record);
    outcome = {
      // Nothing stays staged for a next run to deliver: `pending` would promise what cannot happen.
      ...rotatedOutcome(ctx, regenerated.entry, { sinks: result.sinks, pending: [] }, decision.check, regenerated.entry.reason, token),
      action: 'failed',
      error: { code: StagingFailedError.code, message: result.message },
      ...found,
    };
  } else {
    const delivery = await finishRotation(ctx, regenerated.entry, record, regenerated.secret);
    outcome = { ...rotatedOutcome(ctx, regenerated.entry, delivery, decision.check, regenerated.entry.reason, token), ...found };
  }
  if (!options.force) return outcome;
  // The leaked credential may be one replaced earlier and still inside its own overlap.
  const latest = (await deps.state.read(policy.name)) ?? record;
  const earlierTokens = await endEarlierTokens(ctx, latest, new Date(regenerated.entry.existingTokenExpiresAt));
  return { ...outcome, earlierTokens };
}

/**
 * The check's decision, or an emergency rotation's. A rotation asked for goes on when no key opens
 * the secret the state holds (the operator starts over with a new token); a check does not.
 */
function decideOrForce(
  ctx: RotationContext,
  lineage: ReturnType<typeof lineageFor>,
  token: ServiceToken,
  snapshot: Awaited<ReturnType<typeof snapshotSinks>>,
  options: RotateOptions,
): ReturnType<typeof decideFor> {
  const { deps, policy } = ctx;
  try {
    return decideFor(policy, lineage, token, snapshot, deps, deps.clock.now());
  } catch (error) {
    if (!(options.force && error instanceof StateKeyError)) throw error;
    ctx.log.warn({ step: 'check', reason: error.message }, 'the held secret cannot be opened; rotating as asked');
    const { secret: _unopened, ...record } = lineage.record;
    return decideFor(policy, { ...lineage, record }, token, snapshot, deps, deps.clock.now());
  }
}

function rotatedOutcome(
  ctx: RotationContext,
  entry: StagedEntry,
  { sinks, pending, verification }: Omit<DeliveryResult, 'delivered'>,
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
    newId: entry.staged.newId,
    newExpiresAt: entry.staged.newExpiresAt,
    existingTokenExpiresAt: entry.existingTokenExpiresAt,
    rotationId: rotationIdOf(entry),
    rotatedAt: entry.startedAt,
    sinks,
    orphans: ctx.orphans,
    ...(verification ? { verification } : {}),
  };
  if (verification?.result === 'failed') {
    const message =
      `verification failed (${verification.check}): ${verification.message}; nothing committed and no consumer reloaded: ` +
      `the secret stays staged and the next run verifies it again. The old token keeps working until ${entry.existingTokenExpiresAt}`;
    return { ...outcome, action: 'failed', error: { code: VerifyFailedError.code, message } };
  }
  if (pending.length === 0) return outcome;
  const message = `rotated, but not yet delivered to ${pending.join(', ')}; the secret stays staged and the next run delivers it without regenerating`;
  return { ...outcome, action: 'failed', pending, error: { code: SinkError.code, message } };
}

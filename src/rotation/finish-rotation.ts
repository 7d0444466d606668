import { LockLostError, StateKeyError } from '../errors.js';
import { fingerprintOf } from '../policy/fingerprint.js';
import type { Secret } from '../secret.js';
import { rotationIdOf, type StagedEntry } from '../state/journal-entry.js';
import { recordRotation } from '../state/lineage.js';
import { openSecret } from '../state/secret-box.js';
import type { StateRecord } from '../state/state-record.js';
import type { RotationContext } from './context.js';
import { storedCurrentSecret } from './current-secret.js';
import { SimulatedCrash, stateKeysOf } from './deps.js';
import { errorSummary, type SinkOutcome, type VerificationOutcome } from './outcome.js';
import { asRecorded } from './recorded-destinations.js';
import { sealContext } from './seal-context.js';
import { verifyRotation } from './verify-rotation.js';

export interface DeliveryResult {
  sinks: SinkOutcome[];
  /** Sinks that still lack the staged secret; non-empty means the rotation is not committed. */
  pending: string[];
  /** The targets the journal marks as delivered after this delivery. */
  delivered: string[];
  /** Once every sink holds the secret: what verifying it found. Failed means not committed. */
  verification?: VerificationOutcome;
}

function unseal(ctx: RotationContext, entry: StagedEntry): Secret {
  const secret = openSecret(entry.staged.secret, stateKeysOf(ctx.deps), sealContext(entry.name, entry.staged.newId));
  if (secret === 'no-key') {
    throw new StateKeyError(
      `journal entry ${ctx.deps.journal.describe(entry.name)} holds a sealed secret; set ROTATOR_STATE_KEY to the key it was sealed with to deliver it`,
    );
  }
  if (secret === 'wrong-key') {
    throw new StateKeyError(
      `journal entry ${ctx.deps.journal.describe(entry.name)} cannot be opened with ROTATOR_STATE_KEY or ROTATOR_STATE_KEY_PREVIOUS; give the key it was sealed with in ROTATOR_STATE_KEY_PREVIOUS to deliver it`,
    );
  }
  return secret;
}

/**
 * Writes the staged secret to every sink that lacks it. With a durable journal each delivery is
 * marked before the next sink is touched, so a crash resumes with the sinks not yet marked; without
 * one (the state disk failed after regenerate) the secret is delivered from memory, unmarked.
 */
export async function deliverStaged(
  ctx: RotationContext,
  entry: StagedEntry,
  secret: Secret,
  journal: 'durable' | 'unavailable',
  /** The record before this rotation: a destination it says this name delivered to is ours, marker or not. */
  record?: StateRecord,
): Promise<DeliveryResult> {
  const { deps, policy, log } = ctx;
  const { staged } = entry;
  const delivered = new Set(entry.delivered);
  const sinks: SinkOutcome[] = [];

  const meta = {
    name: policy.name,
    id: staged.newId,
    expiresAt: staged.newExpiresAt ? new Date(staged.newExpiresAt) : null,
    rotationId: rotationIdOf(entry),
    rotatedAt: new Date(entry.startedAt),
  };
  for (const config of policy.sinks) {
    const sink = deps.sinks.describe(config);
    const target = deps.sinks.target(config);
    if (delivered.has(target)) {
      sinks.push({ sink, result: 'unchanged' });
      continue;
    }
    try {
      // A holder stopped long enough to lose the name must not write over what the new holder delivers.
      await ctx.lock.assertHeld();
      const result = await deps.sinks.write(asRecorded(config, deps, record), secret, meta, { signal: ctx.signal });
      deps.failpoint?.('written');
      delivered.add(target);
      if (journal === 'durable') {
        await ctx.lock.assertHeld();
        // Not waited for: a lost mark means this sink is written again, which is idempotent.
        await deps.journal.write({ ...entry, delivered: [...delivered] }, { durable: false });
      }
      sinks.push({ sink, result });
      log.info({ step: 'delivered', id: staged.newId, sink, result }, 'delivered');
      deps.failpoint?.('delivered');
    } catch (error) {
      if (error instanceof SimulatedCrash || error instanceof LockLostError) throw error;
      sinks.push({ sink, result: 'failed', error: errorSummary(error).message });
      if (ctx.signal?.aborted) {
        // Given up at a stop's deadline: not a failure of the sink, and the next run delivers it.
        log.warn(
          { step: 'delivered', id: staged.newId, sink },
          'delivery interrupted by the stop; the secret stays staged for the next run',
        );
      } else {
        log.error(
          { step: 'delivered', id: staged.newId, sink, err: error },
          journal === 'durable' ? 'delivery failed; the secret stays staged for the next run' : 'delivery failed',
        );
      }
    }
  }
  return { sinks, pending: sinks.filter((s) => s.result === 'failed').map((s) => s.sink), delivered: [...delivered] };
}

/**
 * Makes the new id current, then erases the entry and its secret. Only while this process still
 * holds the name: a process stopped long enough to lose its lock must not overwrite what the new
 * holder did; the staged entry it leaves is finished by that holder instead.
 */
export async function commitRotation(ctx: RotationContext, entry: StagedEntry, record: StateRecord, secret: Secret): Promise<void> {
  const { deps, policy, log } = ctx;
  await ctx.lock.assertHeld();
  // A crash after this write and before the erase leaves an entry whose commit is already done: the
  // stored record says so, not the one this run resolved (which sinks' metadata may have supplied).
  const stored = await deps.state.read(policy.name);
  if (stored?.currentId !== entry.staged.newId) await deps.state.write(committedRecord(ctx, entry, record, secret));
  deps.failpoint?.('committed');
  // Not waited for: the commit is durable, and an entry it brings back is recognised as committed.
  await deps.journal.erase(policy.name, { durable: false });
  log.info({ step: 'committed', oldId: entry.oldId, newId: entry.staged.newId }, 'committed');
}

/**
 * Deliver a staged secret to every sink that lacks it, verify it, then commit. Running it again
 * after a crash at any point is safe: sink writes are idempotent, verification only reads, and the
 * commit recognises itself. `skipVerify`: an operator checked the token by hand (`rotate
 * --skip-verify`).
 */
export async function finishRotation(
  ctx: RotationContext,
  entry: StagedEntry,
  record: StateRecord,
  secret?: Secret,
  options: { skipVerify?: boolean } = {},
): Promise<DeliveryResult> {
  const value = secret ?? unseal(ctx, entry);
  const result = await deliverStaged(ctx, entry, value, 'durable', record);
  if (result.pending.length > 0) return result;
  const verification = await verifyStaged(ctx, { ...entry, delivered: result.delivered }, value, options.skipVerify === true);
  if (verification.result === 'failed') return { ...result, verification };
  await commitRotation(ctx, entry, record, value);
  return { ...result, verification };
}

/**
 * Step 6: nobody depends on the new token before it is known to work. A failure is written into
 * the journal entry (for `status`), which stays staged: the next run delivers nothing new and
 * verifies again before committing.
 */
async function verifyStaged(ctx: RotationContext, entry: StagedEntry, secret: Secret, skip: boolean): Promise<VerificationOutcome> {
  const { deps, log } = ctx;
  deps.failpoint?.('verifying');
  if (skip) {
    log.warn({ step: 'verify', newId: entry.staged.newId }, 'verification skipped by the operator (--skip-verify)');
    return { result: 'skipped' };
  }
  const verification = await verifyRotation(ctx, entry, secret, ctx.policy.verify);
  if (verification.ok) {
    log.info({ step: 'verify', newId: entry.staged.newId, checks: verification.checks }, 'verified');
    for (const warning of verification.warnings ?? []) log.warn({ step: 'verify', newId: entry.staged.newId }, warning);
    return { result: 'passed', checks: verification.checks, ...(verification.warnings ? { warnings: verification.warnings } : {}) };
  }
  log.error(
    { step: 'verify', newId: entry.staged.newId, check: verification.check, reason: verification.message },
    'verification failed; nothing committed, the secret stays staged',
  );
  // A sink that reads back something else did not get the secret: it is written again next time.
  await ctx.lock.assertHeld();
  await deps.journal.write({
    ...entry,
    delivered: entry.delivered.filter((target) => target !== verification.target),
    verifyFailed: { check: verification.check, message: verification.message, at: deps.clock.now().toISOString() },
  });
  return { result: 'failed', check: verification.check, message: verification.message };
}

/**
 * The record once the staged token is current: every sink of the policy holds its secret now, and
 * the state holds it too, sealed, for later repairs.
 */
export function committedRecord(ctx: RotationContext, entry: StagedEntry, record: StateRecord, secret: Secret): StateRecord {
  const fingerprint = fingerprintOf(secret, ctx.deps.stateKey);
  const current = {
    known: true as const,
    secret,
    how: 'rotated' as const,
    rotationId: rotationIdOf(entry),
    at: entry.startedAt,
    // Stryker disable next-line BooleanLiteral: storedCurrentSecret stores the secret whatever `store` says
    store: true,
  };
  const rotated = recordRotation(record, {
    newId: entry.staged.newId,
    newExpiresAt: entry.staged.newExpiresAt ? new Date(entry.staged.newExpiresAt) : null,
    existingTokenExpiresAt: new Date(entry.existingTokenExpiresAt),
    now: new Date(entry.startedAt),
    sinks: Object.fromEntries(ctx.policy.sinks.map((config) => [ctx.deps.sinks.target(config), fingerprint])),
  });
  return { ...rotated, secret: storedCurrentSecret(record.name, entry.staged.newId, current, stateKeysOf(ctx.deps)) };
}

import type { ServiceToken } from '../api/service-token.js';
import { LockLostError, SinkError } from '../errors.js';
import { fingerprintOf } from '../policy/fingerprint.js';
import { describeDrift, type DriftFinding, repairable } from '../policy/sink-drift.js';
import { withAdoptedSinks } from '../state/lineage.js';
import type { StateRecord } from '../state/state-record.js';
import type { RotationContext } from './context.js';
import type { CurrentSecret } from './current-secret.js';
import { storedCurrentSecret } from './current-secret.js';
import { stateKeysOf } from './deps.js';
import { errorSummary, iso, type SinkOutcome, type TokenOutcome } from './outcome.js';
import { asRecorded } from './recorded-destinations.js';

/**
 * Repairs drift without a new token: every sink that lacks the current secret (missing, holding
 * another, new in the policy) is given the secret the state holds, with the metadata of the
 * rotation that made it. No regenerate, no change to any expiry; a sink whose value did not change
 * (a Secret re-created with the same value) answers `unchanged`, and only a changed one makes the
 * name's consumers reload.
 */
export async function redeliver(
  ctx: RotationContext,
  record: StateRecord,
  token: ServiceToken,
  current: Extract<CurrentSecret, { known: true }>,
  drift: readonly DriftFinding[],
  adopt: ReadonlyArray<{ target: string; fingerprint: string }>,
  reason: string,
): Promise<TokenOutcome> {
  const { deps, policy, log } = ctx;
  const lacking = new Set(repairable(drift).map((d) => d.target));
  const markerOnly = new Set(drift.filter((d) => d.holdsCurrent).map((d) => d.target));
  const meta = {
    name: policy.name,
    id: token.id,
    expiresAt: token.expiresAt,
    rotationId: current.rotationId,
    rotatedAt: new Date(current.at),
  };
  const keys = stateKeysOf(deps);
  const fingerprint = fingerprintOf(current.secret, keys.current);
  const sinks: SinkOutcome[] = [];
  const given: Array<{ target: string; fingerprint: string }> = [];
  log.warn(
    { step: 'redeliver', drift: drift.filter((d) => lacking.has(d.target)).map(describeDrift) },
    'delivering the current secret again',
  );
  for (const config of policy.sinks) {
    const target = deps.sinks.target(config);
    if (!lacking.has(target)) continue;
    const sink = deps.sinks.describe(config);
    try {
      await ctx.lock.assertHeld();
      const result = await deps.sinks.write(asRecorded(config, deps, record), current.secret, meta, { signal: ctx.signal });
      sinks.push({ sink, result, ...(markerOnly.has(target) ? { markerOnly: true as const } : {}) });
      given.push({ target, fingerprint });
      log.info({ step: 'redelivered', id: token.id, sink, result }, 'redelivered');
    } catch (error) {
      if (error instanceof LockLostError) throw error;
      sinks.push({ sink, result: 'failed', error: errorSummary(error).message });
      if (!ctx.signal?.aborted) log.error({ step: 'redelivered', id: token.id, sink, err: error }, 'redelivery failed');
    }
  }

  const now = deps.clock.now();
  const targets = policy.sinks.map(deps.sinks.target);
  const adopted = withAdoptedSinks({ ...record, expiresAt: iso(token.expiresAt) }, targets, adopt, now);
  const next = withAdoptedSinks(adopted, targets, given, now, 'delivered');
  await ctx.lock.assertHeld();
  await deps.state.write({ ...next, secret: storedCurrentSecret(record.name, record.currentId, current, keys) });

  const base: TokenOutcome = {
    name: policy.name,
    action: 'redelivered',
    check: 'sinkDrift',
    reason,
    oldId: token.id,
    expiresAt: iso(token.expiresAt),
    rotationId: current.rotationId,
    rotatedAt: current.at,
    sinks,
    orphans: ctx.orphans,
    drift: [...drift],
  };
  const failed = sinks.filter((s) => s.result === 'failed');
  if (failed.length === 0) return base;
  const message = `could not deliver the current secret again to ${failed.map((s) => s.sink).join(', ')}: ${failed.map((s) => s.error).join('; ')}`;
  // Its stage is the check's (no regenerate was sent): rotateToken says so of every failure without one.
  return { ...base, action: 'failed', reason: message, error: { code: SinkError.code, message } };
}

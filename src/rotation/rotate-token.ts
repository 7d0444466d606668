import type { TokenPolicy } from '../config/types.js';
import { rotationTimes } from '../policy/rotation-times.js';
import { recordRotation } from '../state/lineage.js';
import { checkToken } from './check-token.js';
import type { RotationDeps } from './deps.js';
import { errorSummary, iso, type SinkOutcome, type TokenOutcome } from './outcome.js';

/**
 * One name, start to end: check, regenerate when due, deliver to every sink, then record the new
 * id. The state is written after the sinks because the service's current id has changed whatever
 * the sinks did: a name whose sinks failed is recorded as such and is due again on the next run.
 */
export async function rotateToken(policy: TokenPolicy, deps: RotationDeps, options: { signal?: AbortSignal } = {}): Promise<TokenOutcome> {
  const log = deps.logger.child({ tokenName: policy.name });
  let oldId = policy.id;
  let expiresAt: string | null = null;
  try {
    const { lineage, token, decision } = await checkToken(policy, deps, options);
    oldId = token.id;
    expiresAt = iso(token.expiresAt);
    if (lineage.adopted === 'repointed') log.warn({ id: token.id }, 'the policy id is not in this name\'s lineage; adopting it');
    log.info({ step: 'check', id: token.id, expiresAt, action: decision.action, reason: decision.reason }, 'checked');

    let record = lineage.record;
    if (decision.action === 'skip') {
      if (lineage.adopted || record.expiresAt !== expiresAt) await deps.state.write({ ...record, expiresAt });
      return { name: policy.name, action: 'skipped', check: decision.check, reason: decision.reason, oldId, expiresAt, sinks: [] };
    }

    const now = deps.clock.now();
    const times = rotationTimes({ currentExpiresAt: token.expiresAt, overlapMs: policy.settings.overlapMs, lifetimeMs: policy.settings.lifetimeMs, now });
    const regenerated = await deps.api.regenerate(token.id, times, options);
    log.info(
      { step: 'regenerate', oldId, newId: regenerated.id, existingTokenExpiresAt: iso(times.existingTokenExpiresAt), newExpiresAt: iso(regenerated.expiresAt), reason: decision.reason },
      'regenerated',
    );

    const sinks: SinkOutcome[] = [];
    for (const config of policy.sinks) {
      const sink = deps.createSink(config);
      try {
        const result = await sink.write(regenerated.secret, { name: policy.name, id: regenerated.id, expiresAt: regenerated.expiresAt }, options);
        sinks.push({ sink: sink.describe(), result });
        log.info({ step: 'delivered', id: regenerated.id, sink: sink.describe(), result }, 'delivered');
      } catch (error) {
        sinks.push({ sink: sink.describe(), result: 'failed', error: errorSummary(error).message });
        log.error({ step: 'delivered', id: regenerated.id, sink: sink.describe(), err: error }, 'delivery failed');
      } finally {
        // Nothing between regenerate and recording the new id may throw.
        await sink.close?.().catch((error: unknown) => log.warn({ sink: sink.describe(), err: error }, 'closing the sink failed'));
      }
    }

    const undelivered = sinks.filter((s) => s.result === 'failed').map((s) => s.sink);
    record = recordRotation(record, {
      newId: regenerated.id,
      newExpiresAt: regenerated.expiresAt,
      existingTokenExpiresAt: times.existingTokenExpiresAt,
      undeliveredSinks: undelivered,
      now,
    });
    await deps.state.write(record);
    log.info({ step: 'committed', oldId, newId: regenerated.id }, 'committed');

    const base = {
      name: policy.name,
      check: decision.check,
      oldId,
      expiresAt,
      newId: regenerated.id,
      newExpiresAt: iso(regenerated.expiresAt),
      existingTokenExpiresAt: times.existingTokenExpiresAt.toISOString(),
      sinks,
    };
    if (undelivered.length > 0) {
      const message = `rotated, but not delivered to ${undelivered.join(', ')}; the next run rotates again to reach them`;
      return { ...base, action: 'failed', reason: decision.reason, error: { code: 'ERR_SINK', message } };
    }
    return { ...base, action: 'rotated', reason: decision.reason };
  } catch (error) {
    log.error({ err: error }, 'rotation failed');
    const summary = errorSummary(error);
    return { name: policy.name, action: 'failed', reason: summary.message, oldId, expiresAt, sinks: [], error: summary };
  }
}

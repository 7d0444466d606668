import { StateError } from '../errors.js';
import type { Secret } from '../secret.js';
import type { StagedEntry } from '../state/journal-entry.js';
import { recordRotation } from '../state/lineage.js';
import { openSecret } from '../state/secret-box.js';
import type { StateRecord } from '../state/state-record.js';
import type { RotationContext } from './context.js';
import { errorSummary, type SinkOutcome } from './outcome.js';
import { sealContext } from './seal-context.js';

export interface DeliveryResult {
  sinks: SinkOutcome[];
  /** Sinks that still lack the staged secret; non-empty means the rotation is not committed. */
  pending: string[];
}

function unseal(ctx: RotationContext, entry: StagedEntry): Secret {
  const secret = openSecret(entry.staged.secret, ctx.deps.stateKey, sealContext(entry.name, entry.staged.newId));
  if (secret === 'no-key') {
    throw new StateError(
      `journal entry ${ctx.deps.journal.describe(entry.name)} holds a sealed secret; set ROTATOR_STATE_KEY to the key it was sealed with to deliver it`,
    );
  }
  if (secret === 'wrong-key') {
    throw new StateError(
      `journal entry ${ctx.deps.journal.describe(entry.name)} cannot be opened with this ROTATOR_STATE_KEY; set the key it was sealed with to deliver it`,
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
  journal: 'durable' | 'unavailable' = 'durable',
): Promise<DeliveryResult> {
  const { deps, policy, log } = ctx;
  const { staged } = entry;
  const delivered = new Set(entry.delivered);
  const sinks: SinkOutcome[] = [];

  for (const config of policy.sinks) {
    const sink = deps.createSink(config);
    const target = deps.sinkTarget(config);
    try {
      if (delivered.has(target)) {
        sinks.push({ sink: sink.describe(), result: 'unchanged' });
        continue;
      }
      const meta = { name: policy.name, id: staged.newId, expiresAt: staged.newExpiresAt ? new Date(staged.newExpiresAt) : null };
      const result = await sink.write(secret, meta, { signal: ctx.signal });
      delivered.add(target);
      if (journal === 'durable') await deps.journal.write({ ...entry, delivered: [...delivered] });
      sinks.push({ sink: sink.describe(), result });
      log.info({ step: 'delivered', id: staged.newId, sink: sink.describe(), result }, 'delivered');
      deps.failpoint?.('delivered');
    } catch (error) {
      sinks.push({ sink: sink.describe(), result: 'failed', error: errorSummary(error).message });
      log.error(
        { step: 'delivered', id: staged.newId, sink: sink.describe(), err: error },
        journal === 'durable' ? 'delivery failed; the secret stays staged for the next run' : 'delivery failed',
      );
    } finally {
      // Nothing may stop the entry from being kept or committed.
      await sink.close?.().catch((error: unknown) => log.warn({ sink: sink.describe(), err: error }, 'closing the sink failed'));
    }
  }
  return { sinks, pending: sinks.filter((s) => s.result === 'failed').map((s) => s.sink) };
}

/**
 * Makes the new id current, then erases the entry and its secret. Only while this process still
 * holds the name: a process stopped long enough to lose its lock must not overwrite what the new
 * holder did; the staged entry it leaves is finished by that holder instead.
 */
export async function commitRotation(ctx: RotationContext, entry: StagedEntry, record: StateRecord): Promise<void> {
  const { deps, policy, log } = ctx;
  await ctx.lock.assertHeld();
  // A crash after this write and before the erase leaves an entry whose commit is already done.
  if (record.currentId !== entry.staged.newId) {
    await deps.state.write(
      recordRotation(record, {
        newId: entry.staged.newId,
        newExpiresAt: entry.staged.newExpiresAt ? new Date(entry.staged.newExpiresAt) : null,
        existingTokenExpiresAt: new Date(entry.existingTokenExpiresAt),
        now: new Date(entry.startedAt),
      }),
    );
  }
  deps.failpoint?.('committed');
  await deps.journal.erase(policy.name);
  log.info({ step: 'committed', oldId: entry.oldId, newId: entry.staged.newId }, 'committed');
}

/**
 * Deliver a staged secret to every sink that lacks it, then commit. Running it again after a crash
 * at any point is safe: sink writes are idempotent and the commit recognises itself.
 */
export async function finishRotation(
  ctx: RotationContext,
  entry: StagedEntry,
  record: StateRecord,
  secret?: Secret,
): Promise<DeliveryResult> {
  const result = await deliverStaged(ctx, entry, secret ?? unseal(ctx, entry));
  if (result.pending.length === 0) await commitRotation(ctx, entry, record);
  return result;
}

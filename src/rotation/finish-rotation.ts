import { StateError } from '../errors.js';
import type { Secret } from '../secret.js';
import type { JournalEntry } from '../state/journal-entry.js';
import { recordRotation } from '../state/lineage.js';
import { openSecret } from '../state/secret-box.js';
import type { StateRecord } from '../state/state-record.js';
import type { RotationContext } from './context.js';
import { errorSummary, type SinkOutcome } from './outcome.js';
import { sealContext } from './regenerate-journalled.js';

export interface FinishResult {
  sinks: SinkOutcome[];
  /** Sinks that still lack the staged secret; non-empty means the entry stays open. */
  pending: string[];
}

function unseal(ctx: RotationContext, entry: JournalEntry): Secret {
  const staged = entry.staged!;
  const secret = openSecret(staged.secret, ctx.deps.stateKey, sealContext(entry.name, staged.newId));
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
 * Deliver a staged secret to every sink that lacks it, marking each in the journal, then make the
 * new id current and erase the entry. Running it again after a crash at any point is safe: sink
 * writes are idempotent and the commit recognises itself.
 */
export async function finishRotation(
  ctx: RotationContext,
  entry: JournalEntry,
  record: StateRecord,
  secret?: Secret,
): Promise<FinishResult> {
  const { deps, policy, log } = ctx;
  const staged = entry.staged!;
  const value = secret ?? unseal(ctx, entry);
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
      const result = await sink.write(
        value,
        { name: policy.name, id: staged.newId, expiresAt: staged.newExpiresAt ? new Date(staged.newExpiresAt) : null },
        { signal: ctx.signal },
      );
      delivered.add(target);
      await deps.journal.write({ ...entry, delivered: [...delivered] });
      sinks.push({ sink: sink.describe(), result });
      log.info({ step: 'delivered', id: staged.newId, sink: sink.describe(), result }, 'delivered');
      deps.failpoint?.('delivered');
    } catch (error) {
      const summary = errorSummary(error);
      sinks.push({ sink: sink.describe(), result: 'failed', error: summary.message });
      log.error(
        { step: 'delivered', id: staged.newId, sink: sink.describe(), err: error },
        'delivery failed; the secret stays staged for the next run',
      );
    } finally {
      // Nothing may stop the entry from being kept or committed.
      await sink.close?.().catch((error: unknown) => log.warn({ sink: sink.describe(), err: error }, 'closing the sink failed'));
    }
  }

  const pending = sinks.filter((s) => s.result === 'failed').map((s) => s.sink);
  if (pending.length > 0) return { sinks, pending };

  // A crash after this write and before the erase leaves an entry whose commit is already done.
  if (record.currentId !== staged.newId) {
    await deps.state.write(
      recordRotation(record, {
        newId: staged.newId,
        newExpiresAt: staged.newExpiresAt ? new Date(staged.newExpiresAt) : null,
        existingTokenExpiresAt: new Date(entry.existingTokenExpiresAt),
        now: new Date(entry.startedAt),
      }),
    );
  }
  deps.failpoint?.('committed');
  await deps.journal.erase(policy.name);
  log.info({ step: 'committed', oldId: entry.oldId, newId: staged.newId }, 'committed');
  return { sinks, pending };
}

import { LockLostError } from '../errors.js';
import type { Secret } from '../secret.js';
import type { StagedEntry } from '../state/journal-entry.js';
import type { StateRecord } from '../state/state-record.js';
import type { RotationContext } from './context.js';
import { committedRecord, deliverStaged, type DeliveryResult } from './finish-rotation.js';
import { errorSummary } from './outcome.js';
import { reportOrphan } from './report-orphan.js';

export interface UnjournalledResult extends DeliveryResult {
  /** What happened, for the outcome: always a failure, since the state disk is failing. */
  message: string;
}

/**
 * The service answered, and the journal could not be written (the state disk turned read-only or
 * full while the regenerate was in flight). The secret exists only in this process: it is delivered
 * from memory to every sink that takes it, committed if the state still can be, and what happened
 * is said now, by this run, never left for the next one to discover as an orphan.
 */
export async function deliverUnjournalled(
  ctx: RotationContext,
  entry: StagedEntry,
  secret: Secret,
  cause: unknown,
  record: StateRecord,
): Promise<UnjournalledResult> {
  const { deps, policy, log } = ctx;
  const { newId } = entry.staged;
  const why = errorSummary(cause).message;
  const orphan = { oldId: entry.oldId, newId, regeneratedAt: entry.startedAt, oldTokenWorksUntil: entry.existingTokenExpiresAt };
  let result;
  try {
    // Never given up at a stop's deadline: this secret exists nowhere but in memory.
    // Stryker disable next-line StringLiteral: deliverStaged only tells 'durable' from anything else
    result = await deliverStaged({ ...ctx, signal: undefined }, entry, secret, 'unavailable', record);
  } catch (error) {
    // The name's new holder owns every sink now: this secret, journalled nowhere, is lost.
    // Stryker disable next-line ConditionalExpression: deliverStaged lets only this and the tests' SimulatedCrash through
    if (error instanceof LockLostError)
      // Stryker disable next-line StringLiteral: the detail only words the orphan's log line
      reportOrphan(ctx, orphan, 'this process lost its lock on the name while delivering a secret it could not journal');
    throw error;
  }

  if (result.pending.length > 0) {
    const reached = result.sinks.filter((s) => s.result !== 'failed').map((s) => s.sink);
    const detail = reached.length
      ? `the journal could not be written (${why}), and the secret reached only ${reached.join(', ')}, not ${result.pending.join(', ')}`
      : `the journal could not be written (${why}), and no sink took the secret`;
    reportOrphan(ctx, orphan, detail);
    await forgetIntent(ctx);
    return {
      ...result,
      message:
        `regenerated ${entry.oldId} -> ${newId}, but ${detail}: it cannot be kept. ` +
        `The next run rotates '${policy.name}' again from ${entry.oldId}, which works until ${entry.existingTokenExpiresAt}.`,
    };
  }

  /** Why the new id could not be recorded in the state either; undefined once it is. */
  let stateWhy: string | undefined;
  try {
    await ctx.lock.assertHeld();
    await deps.state.write(committedRecord(ctx, entry, record, secret));
    log.info({ step: 'committed', oldId: entry.oldId, newId }, 'committed without a journal');
  } catch (error) {
    stateWhy = errorSummary(error).message;
    log.error({ step: 'committed', oldId: entry.oldId, newId, err: error }, 'the new id could not be recorded either');
  }
  await forgetIntent(ctx);
  return {
    ...result,
    message:
      stateWhy === undefined
        ? `regenerated ${entry.oldId} -> ${newId} and delivered it to every sink, but the journal could not be written (${why}). ` +
          `The rotation is recorded in the state; check the disk of the state folder.`
        : `regenerated ${entry.oldId} -> ${newId} and delivered it to every sink, but neither the journal (${why}) nor the state ` +
          `(${stateWhy}) could record the new id: the next run would start from ${entry.oldId} (which stops at ${entry.existingTokenExpiresAt}) ` +
          `and rotate again. To keep the delivered token, fix the disk and set \`id: ${JSON.stringify(newId)}\` for '${policy.name}' in the policy.`,
  };
}

/**
 * The intent entry is erased when the disk allows it; when it does not, the next run recognises a
 * committed rotation by the state's lineage, and reconciles (and reports) an uncommitted one.
 */
async function forgetIntent(ctx: RotationContext): Promise<void> {
  const { journal } = ctx.deps;
  await journal.erase(ctx.policy.name).catch((error: unknown) => ctx.log.warn({ err: error }, 'the intent entry could not be erased'));
}

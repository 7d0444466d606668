import { sharedFailure } from '../errors.js';
import type { DriftFinding } from '../policy/sink-drift.js';
import { assessToken } from './assess-token.js';
import type { RotationDeps } from './deps.js';
import { entryTrust, journalStep } from './journal-step.js';
import { errorSummary, iso } from './outcome.js';
import { findStrayEntries } from './stray-entries.js';
import type { TokenSet } from './token-spec.js';

export interface PlanEntry {
  name: string;
  id: string;
  expiresAt: string | null;
  action: 'rotate' | 'redeliver' | 'skip' | 'error';
  reason: string;
  dueAt: string | null;
  /** Sinks that do not hold the current secret, found by reading them back. */
  drift?: DriftFinding[];
  /** The HTTP status the token service answered, when the check failed on one. */
  status?: number;
}

/** The decisions `once` would take now, with nothing written anywhere. */
export async function planAll(
  policy: TokenSet,
  deps: Pick<RotationDeps, 'api' | 'state' | 'journal' | 'clock' | 'logger' | 'sinks' | 'stateKey'>,
  options: { concurrency: number },
): Promise<PlanEntry[]> {
  const strays = (await findStrayEntries(policy, deps.journal)).map((stray): PlanEntry => ({
    name: stray.name,
    id: '-',
    expiresAt: null,
    action: 'error',
    reason: stray.message,
    dueAt: null,
  }));
  const entries = await inPool(policy.tokens, options.concurrency, async (policyToken): Promise<PlanEntry> => {
    // The id the service is asked about: a failure names it, not the policy's (see assessToken).
    const asked: { id?: string } = {};
    try {
      const [unfinished, record] = await Promise.all([deps.journal.read(policyToken.name), deps.state.read(policyToken.name)]);
      const step = journalStep(unfinished, record, entryTrust(policyToken.id, deps.stateKey, unfinished));
      if (step.kind === 'held') {
        return {
          name: policyToken.name,
          id: step.entry.oldId,
          expiresAt: step.entry.oldExpiresAt,
          action: 'error',
          reason: `a new secret is held in ${deps.journal.describe(policyToken.name)}: ${step.entry.held.problem}; nothing is rotated until an operator deals with it`,
          dueAt: null,
        };
      }
      if (step.kind === 'finish-staged' || step.kind === 'reconcile') {
        const what =
          step.kind === 'finish-staged'
            ? `deliver the staged secret of ${step.entry.staged.newId} without regenerating`
            : 'reconcile a regenerate whose outcome is unknown';
        return {
          name: policyToken.name,
          id: step.entry.oldId,
          expiresAt: step.entry.oldExpiresAt,
          action: 'rotate',
          reason: `an interrupted rotation will be finished first: ${what}`,
          dueAt: null,
        };
      }
      const { token, decision, sinks } = await assessToken(policyToken, deps, { asked });
      return {
        name: policyToken.name,
        id: token.id,
        expiresAt: iso(token.expiresAt),
        action: decision.action,
        reason: decision.reason,
        dueAt: iso(decision.dueAt),
        ...(sinks.drift.length > 0 ? { drift: sinks.drift } : {}),
      };
    } catch (error) {
      if (sharedFailure(error)) deps.logger.warn({ tokenName: policyToken.name }, `not checked: ${(error as Error).message}`);
      else deps.logger.error({ tokenName: policyToken.name, err: error }, 'check failed');
      const summary = errorSummary(error);
      return {
        name: policyToken.name,
        id: asked.id ?? policyToken.id,
        expiresAt: null,
        action: 'error',
        reason: summary.message,
        dueAt: null,
        ...(summary.status !== undefined ? { status: summary.status } : {}),
      };
    }
  });
  return [...entries, ...strays];
}

/**
 * `check` of every item, at most `concurrency` at once, the results in the items' order. Each of
 * `concurrency` workers takes the next item when its check ends, so a policy of 5,000 tokens makes
 * a few pending promises, not 5,000 queued closures.
 */
async function inPool<T, R>(items: readonly T[], concurrency: number, check: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await check(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

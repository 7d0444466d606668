import { backoffUntil } from '../policy/backoff.js';
import { decide } from '../policy/decide.js';
import type { DriftFinding } from '../policy/sink-drift.js';
import type { SinkConfig } from '../sinks/registry.js';
import type { JournalEntry } from '../state/journal-entry.js';
import { historyOf } from '../state/lineage.js';
import type { StateRecord } from '../state/state-record.js';
import { errorSummary } from './outcome.js';
import type { TokenSpec } from './token-spec.js';

/** What an operator asks of a name, from what is on disk: no network, so it works when the service does not. */
export interface TokenStatus {
  name: string;
  currentId: string;
  expiresAt: string | null;
  lastRotatedAt: string | null;
  /** When the next check will find it due, from the last known expiry; null: never. */
  nextDueAt: string | null;
  /** Sinks still waiting for a staged secret, or a regenerate whose outcome a run must reconcile. */
  pending: string[];
  consecutiveFailures: number;
  backoffUntil: string | null;
  lastError: { at: string; code: string; message: string } | null;
  /** The service's clock minus this machine's, as last measured (ms); null when never measured. */
  serviceClockOffsetMs: number | null;
  /** Sinks that do not hold what was delivered to them, read back now. */
  drift: DriftFinding[];
}

export function tokenStatus(
  policy: TokenSpec,
  record: StateRecord | undefined,
  entry: JournalEntry | undefined,
  now: Date,
  sink: { describe(config: SinkConfig): string; target(config: SinkConfig): string },
  drift: DriftFinding[] = [],
): TokenStatus {
  const pending =
    entry?.phase === 'staged'
      ? [
          ...policy.sinks.filter((s) => !entry.delivered.includes(sink.target(s))).map((s) => sink.describe(s)),
          // Delivered but not verified: the deadline is the old token's, which consumers still use.
          ...(entry.verifyFailed
            ? [
                `old token stops at ${entry.existingTokenExpiresAt}, new token ${entry.staged.newId} not verified ` +
                  `(${entry.verifyFailed.check}: ${entry.verifyFailed.message})`,
              ]
            : []),
        ]
      : entry?.phase === 'intent'
        ? [`a regenerate of ${entry.oldId} sent at ${entry.startedAt} with no known outcome`]
        : entry?.phase === 'held'
          ? [`a new secret held in the journal, delivered nowhere: ${entry.held.problem}`]
          : [];
  if (!record) {
    return {
      name: policy.name,
      currentId: policy.id,
      expiresAt: null,
      lastRotatedAt: null,
      nextDueAt: null,
      pending,
      consecutiveFailures: 0,
      backoffUntil: null,
      lastError: null,
      serviceClockOffsetMs: null,
      drift,
    };
  }
  // Expiries and failure times were written on the service's clock: compare them on it too.
  const serviceNow = new Date(now.getTime() + (record.serviceClock?.offsetMs ?? 0));
  const decision = decide({
    token: { id: record.currentId, expiresAt: record.expiresAt ? new Date(record.expiresAt) : null },
    history: historyOf(record),
    settings: policy.settings,
    now: serviceNow,
  });
  const until = backoffUntil({
    consecutiveFailures: record.consecutiveFailures,
    lastFailureAt: record.lastFailure ? new Date(record.lastFailure.at) : null,
  });
  return {
    name: policy.name,
    currentId: record.currentId,
    expiresAt: record.expiresAt,
    lastRotatedAt: record.lastRotatedAt,
    nextDueAt: decision.dueAt ? decision.dueAt.toISOString() : null,
    pending,
    consecutiveFailures: record.consecutiveFailures,
    backoffUntil: until && until > serviceNow ? until.toISOString() : null,
    lastError: record.consecutiveFailures > 0 ? record.lastFailure : null,
    serviceClockOffsetMs: record.serviceClock?.offsetMs ?? null,
    drift,
  };
}

/** A name whose state cannot be read still gets a line, saying why. */
export function unreadableStatus(policy: TokenSpec, error: unknown): TokenStatus {
  const { code, message } = errorSummary(error);
  return {
    name: policy.name,
    currentId: policy.id,
    expiresAt: null,
    lastRotatedAt: null,
    nextDueAt: null,
    pending: [],
    consecutiveFailures: 0,
    backoffUntil: null,
    lastError: { at: '', code, message },
    serviceClockOffsetMs: null,
    drift: [],
  };
}

/** A name that left the policy but whose unfinished rotation is still in the journal. */
export function strayStatus(stray: { name: string; message: string }): TokenStatus {
  return {
    name: stray.name,
    currentId: '-',
    expiresAt: null,
    lastRotatedAt: null,
    nextDueAt: null,
    pending: [stray.message],
    consecutiveFailures: 0,
    backoffUntil: null,
    lastError: null,
    serviceClockOffsetMs: null,
    drift: [],
  };
}

import { outputCode } from '../error-helpers.js';
import { ApiError, type ErrorCode } from '../errors.js';
import type { CheckName } from '../policy/decide.js';
import { type DriftFinding, isRepairable } from '../policy/sink-drift.js';
import { scrubSecrets } from '../secret.js';
import type { WriteResult } from '../sinks/sink.js';
import type { OrphanReport } from './orphan-report.js';

/**
 * What came of one reload target: `restarted` (a workload's pods are being replaced), `notified`
 * (a webhook took it), `skipped` (on purpose: a paused Deployment), or `failed`.
 */
export interface ReloadOutcome {
  /** `Deployment apps/ingest-api`, `webhook INGEST_RELOAD_URL`: for tables, logs and the metric's label. */
  target: string;
  result: 'restarted' | 'notified' | 'skipped' | 'failed';
  message?: string;
}

/** What became of a token replaced before the one an emergency rotation just replaced. */
export interface EarlierTokenOutcome {
  id: string;
  /**
   * `ended`: ended now; `already-ended`: it stops by the deadline anyway; `gone`: the service no
   * longer knows it; `still-alive`: it could not be ended and works until `expiresAt`.
   */
  result: 'ended' | 'already-ended' | 'gone' | 'still-alive';
  /** When it stops working, as far as we know (null: never). */
  expiresAt: string | null;
  error?: string;
}

export interface SinkOutcome {
  sink: string;
  result: WriteResult | 'failed';
  error?: string;
  /** Written only to restore its ownership marker: it held the current secret, so no consumer's value changed. */
  markerOnly?: true;
}

/**
 * Why a token was acted on: a policy check, an interrupted rotation being finished (`resumed`),
 * an emergency rotation (`manual`), another process holding its lock (`busy`), or recent failures
 * (`backoff`).
 */
export type OutcomeCheck = CheckName | 'resumed' | 'manual' | 'busy' | 'backoff';

/**
 * What happened to one token in a run: everything the table, the JSON and the audit need, no secret.
 * `interrupted`: the process was asked to stop (SIGTERM, SIGINT) before or while it worked on the
 * name. Not a failure: nothing is counted against the name, and the next run takes it up (a started
 * rotation from its journal entry).
 */
export interface TokenOutcome {
  name: string;
  /**
   * `redelivered`: no new token; sinks that lacked the current secret (missing, another secret, new
   * in the policy) were given the secret the state holds again.
   */
  action: 'rotated' | 'redelivered' | 'skipped' | 'failed' | 'interrupted';
  check?: OutcomeCheck;
  /**
   * For a failed or interrupted name: where it stopped. `check` before any regenerate was sent (only
   * reads happened), `rotation` once one was sent or an unfinished one was taken up. Metrics count
   * only the second as a failed rotation.
   */
  stage?: 'check' | 'rotation';
  reason: string;
  /** The id retrieved at the start of the run. */
  oldId: string;
  /** The current token's expiry at the start of the run. */
  expiresAt: string | null;
  newId?: string;
  newExpiresAt?: string | null;
  /** When the replaced token stops working. */
  existingTokenExpiresAt?: string;
  /** The rotation, as every sink that holds its secret knows it. */
  rotationId?: string;
  rotatedAt?: string;
  sinks: SinkOutcome[];
  /** Sinks that still lack the staged secret: the next run delivers it without regenerating. */
  pending?: string[];
  /** Tokens the service created whose secret was lost during this run. */
  orphans: OrphanReport[];
  /**
   * After an emergency rotation: the name's earlier tokens that still worked, each ended or named
   * as still alive.
   */
  earlierTokens?: EarlierTokenOutcome[];
  /**
   * Sinks found not to hold the current secret by this check. With a rotation they are repaired by
   * it (but for an unreadable one); without one (`onDrift: report`) they still lack it.
   */
  drift?: DriftFinding[];
  error?: { code: string; message: string; status?: number };
  /**
   * Step 6, after delivery and before commit: `passed` with the checks made, `failed` with the one
   * that failed (nothing committed, no reload, the secret staged), or `skipped` by an operator.
   */
  verification?: VerificationOutcome;
  /** After a rotation: the workloads restarted and hooks called, each with its result. */
  reloads?: ReloadOutcome[];
}

export type VerificationOutcome =
  /** `warnings`: the new token differs from what was asked without breaking a consumer (its expiry). */
  | { result: 'passed'; checks: Array<'service' | 'read-back' | 'probe'>; warnings?: string[] }
  | { result: 'failed'; check: 'service' | 'read-back' | 'probe'; message: string }
  | { result: 'skipped' };

export const iso = (d: Date | null) => (d ? d.toISOString() : null);

/**
 * An error as an outcome carries it. `status`: the HTTP status the token service answered, when it
 * answered one (a 404 on retrieve means the token does not exist, which is not a failed rotation).
 */
export function errorSummary(error: unknown): { code: ErrorCode; message: string; status?: number } {
  const e = error as { code?: unknown; message?: unknown; status?: unknown };
  // Scrubbed here, the one place every failure's text passes on its way to outcomes, tables, JSON,
  // notices, state records and the journal: a service or a sink may have echoed a secret.
  const summary = {
    code: outputCode(e?.code),
    message: scrubSecrets(String(e?.message ?? error)),
  };
  return error instanceof ApiError && typeof e.status === 'number' ? { ...summary, status: e.status } : summary;
}

/**
 * Whether an outcome leaves something for a person to do: a failure, an orphan, a sink still
 * lacking the current secret, or a reload that failed. What makes `once` exit 1.
 */
export function needsAttention(outcome: TokenOutcome): boolean {
  const unrepaired = (outcome.drift ?? []).some((d) => !isRepairable(d) || !repairs(outcome));
  const reloadFailed = outcome.reloads?.some((r) => r.result === 'failed') === true;
  return outcome.action === 'failed' || outcome.orphans.length > 0 || unrepaired || reloadFailed;
}

/** An outcome that gave every drifted sink the current secret: a rotation, or a redelivery. */
const repairs = (outcome: TokenOutcome) => outcome.action === 'rotated' || outcome.action === 'redelivered';

/**
 * Whether, after this outcome, every sink of the name holds the current secret: it was rotated or
 * redelivered, or the check found nothing lacking. What a pod's start waits for (`/startupz`).
 */
export function sinksHoldCurrent(outcome: TokenOutcome): boolean {
  if (outcome.action === 'failed' || outcome.action === 'interrupted') return false;
  if (outcome.check === 'busy' || outcome.check === 'backoff') return false;
  return !(outcome.drift ?? []).some((d) => !isRepairable(d) || !repairs(outcome));
}

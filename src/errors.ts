/**
 * One error family with stable codes (the code is on the class and on the instance, as in `jose`).
 * Messages name the token, the step and what to do; they never carry a secret or a header value.
 * `cause` is only ever set to something that holds no request options: see `api/translate-error.ts`.
 */
export interface ConfigIssue {
  /** Where the problem is: `tokens[1].sinks[0].path`, `env.ROTATOR_API_URL`, or a file name. */
  path: string;
  message: string;
}

/**
 * Every code an error of ours can carry: stable, documented, and the only place they are spelled.
 * `ERR_UNEXPECTED` stands for anything that is not one of ours.
 */
export type RotatorErrorCode =
  | 'ERR_ROTATOR'
  | 'ERR_CONFIG'
  | 'ERR_AUTH'
  | 'ERR_API'
  | 'ERR_REGENERATE_OUTCOME_UNKNOWN'
  | 'ERR_REGENERATE_ANSWER_UNUSABLE'
  | 'ERR_API_RESPONSE'
  | 'ERR_SINK'
  | 'ERR_LOCK_LOST'
  | 'ERR_SECRET_HELD'
  | 'ERR_STAGING_FAILED'
  | 'ERR_LOCKED'
  | 'ERR_KUBERNETES'
  | 'ERR_STATE'
  | 'ERR_ORPHANED_TOKEN'
  | 'ERR_UNEXPECTED';

/** The code given to a failure that is not one of our errors. */
export const UNEXPECTED_ERROR_CODE: RotatorErrorCode = 'ERR_UNEXPECTED';

export class RotatorError extends Error {
  static readonly code: RotatorErrorCode = 'ERR_ROTATOR';
  readonly code: RotatorErrorCode;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = (new.target as typeof RotatorError).code;
  }
}

/** Bad policy, environment or arguments. Always found before any network call; exit code 2. */
export class ConfigError extends RotatorError {
  static override readonly code: RotatorErrorCode = 'ERR_CONFIG';
  readonly issues: readonly ConfigIssue[];

  constructor(issues: readonly ConfigIssue[]) {
    // Grouped by where they are, so a token's problems read together (tokens[2] before tokens[10]).
    const sorted = [...issues].sort((a, b) => a.path.localeCompare(b.path, 'en', { numeric: true }));
    super(formatIssues(sorted));
    this.issues = sorted;
  }
}

export function formatIssues(issues: readonly ConfigIssue[]): string {
  const noun = issues.length === 1 ? 'problem' : 'problems';
  return `${issues.length} configuration ${noun}:\n${issues.map((i) => `  ${i.path}: ${i.message}`).join('\n')}`;
}

/** The authorization server refused or could not be reached. */
export class AuthError extends RotatorError {
  static override readonly code: RotatorErrorCode = 'ERR_AUTH';
}

export type ApiOperation = 'retrieve' | 'regenerate';

/** The token service answered with an error, or could not be reached. */
export class ApiError extends RotatorError {
  static override readonly code: RotatorErrorCode = 'ERR_API';
  readonly op: ApiOperation;
  readonly status: number | undefined;
  readonly traceId: string | undefined;
  readonly serviceMessage: string | undefined;

  constructor(message: string, details: { op: ApiOperation; status?: number; traceId?: string; serviceMessage?: string; cause?: unknown }) {
    super(message, { cause: details.cause });
    this.op = details.op;
    this.status = details.status;
    this.traceId = details.traceId;
    this.serviceMessage = details.serviceMessage;
  }
}

/**
 * Regenerate may or may not have been committed by the service (timeout, reset, 5xx, 200 without a
 * token). Sending it again blindly could mint a second token and lose the first one's secret.
 */
export class RegenerateOutcomeUnknownError extends ApiError {
  static override readonly code: RotatorErrorCode = 'ERR_REGENERATE_OUTCOME_UNKNOWN';
}

/**
 * The service answered 200 with a `token` field that holds nothing usable: it acted, and the new
 * secret is lost. Never followed by another regenerate in the same run.
 */
export class RegenerateAnswerUnusableError extends ApiError {
  static override readonly code: RotatorErrorCode = 'ERR_REGENERATE_ANSWER_UNUSABLE';
}

/** The service answered 200 with a body that is not what the contract says. */
export class ApiResponseError extends ApiError {
  static override readonly code: RotatorErrorCode = 'ERR_API_RESPONSE';
}

export class SinkError extends RotatorError {
  static override readonly code: RotatorErrorCode = 'ERR_SINK';
}

/**
 * This process no longer holds the name's lock (it was stopped for long enough that another process
 * took the lock over). Everything it would do next could conflict with the new owner, so it stops.
 */
export class LockLostError extends RotatorError {
  static override readonly code: RotatorErrorCode = 'ERR_LOCK_LOST';
}

/**
 * The service answered a new secret with an id that cannot be used. The secret is kept in the
 * journal, and the name stops until an operator has dealt with it.
 */
export class SecretHeldError extends RotatorError {
  static override readonly code: RotatorErrorCode = 'ERR_SECRET_HELD';
}

/**
 * A new secret was received but could not be journalled (the state disk failed): it was delivered
 * from memory as far as it could be, and what happened is in the message.
 */
export class StagingFailedError extends RotatorError {
  static override readonly code: RotatorErrorCode = 'ERR_STAGING_FAILED';
}

/** Another process holds the name's lock while the name is due: it was not rotated by this run. */
export class NameLockedError extends RotatorError {
  static override readonly code: RotatorErrorCode = 'ERR_LOCKED';
}

/**
 * The Kubernetes API refused or could not be reached: its `Status` reason and HTTP status, for the
 * caller to tell a missing object from a conflict or a permission problem.
 */
export class KubernetesError extends RotatorError {
  static override readonly code: RotatorErrorCode = 'ERR_KUBERNETES';
  readonly status: number | undefined;
  readonly reason: string | undefined;

  constructor(message: string, details: { status?: number; reason?: string; cause?: unknown } = {}) {
    super(message, { cause: details.cause });
    this.status = details.status;
    this.reason = details.reason;
  }
}

/** The state store is unreadable or was written by something else; never silently reset. */
export class StateError extends RotatorError {
  static override readonly code: RotatorErrorCode = 'ERR_STATE';
}

/**
 * The service applied a regenerate whose answer never arrived: a new token exists whose secret
 * nobody has. Thrown when the old token no longer works either, so there is nothing to rotate from.
 */
export class OrphanedTokenError extends RotatorError {
  static override readonly code: RotatorErrorCode = 'ERR_ORPHANED_TOKEN';
}

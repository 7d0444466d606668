/**
 * One error family with stable codes (the code is on the class and on the instance, as in `jose`).
 * Messages name the token, the step and what to do; they never carry a secret or a header value.
 * `cause` is only ever set to something that holds no request options: see `api/translate-error.ts`.
 * This file holds the classes and the data they carry; the words an operator reads about a shared
 * dependency are in `error-advice.ts`, and the translators' helpers in `error-helpers.ts`.
 */
export interface ConfigIssue {
  /** Where the problem is: `tokens[1].sinks[0].path`, `env.ROTATOR_API_URL`, or a file name. */
  path: string;
  message: string;
  /**
   * Where in the policy file, 1-based, when known: from the YAML parser for a syntax error, else the
   * entry the path names (see `config/issue-positions.ts`). The text keeps to `path: message`;
   * `validate --json` gives these to tools that annotate the file.
   */
  line?: number;
  column?: number;
}

/** Which shared dependency a failure is about: every token of a run goes through both. */
export type Dependency = 'token service' | 'authorization server';

/**
 * The class of a failure to reach or be accepted by a shared dependency: the same for every token,
 * so said once, with what to check, rather than per token.
 */
export type DependencyFailureKind =
  | 'connection-refused'
  | 'unknown-host'
  | 'unreachable'
  | 'tls'
  | 'timeout'
  /** The authorization server refused the client (invalid_client, a wrong secret or key). */
  | 'client-refused'
  /** The token service refused the access token itself (401). */
  | 'access-refused'
  /** The issuer's discovery document did not answer 200 (a wrong ROTATOR_OAUTH_ISSUER). */
  | 'discovery-failed'
  /** The token endpoint answered an HTTP error that is not a refusal of the client (404, 5xx). */
  | 'token-endpoint-failed'
  /** Every token answered 404, or a 404 not in the service's words: the requests miss the API (ROTATOR_API_URL's path). */
  | 'wrong-base-path';

export interface DependencyFailure {
  dependency: Dependency;
  kind: DependencyFailureKind;
  /** The origin it tried (never a path or query: they may hold a secret). */
  target: string;
  /** What an operator checks first. */
  check: string;
}

/**
 * The root of our errors. Each class sets its code twice, as `jose` does: on the class, for
 * `error.code === StateKeyError.code`, and on the instance. A family's code (this one's, `ApiError`'s
 * and `StateError`'s) is typed as any code of ours, because TypeScript requires a subclass's code to
 * be assignable to its family's; every other class has its own literal as its type.
 */
export class RotatorError extends Error {
  static readonly code: RotatorErrorCode = 'ERR_ROTATOR';
  readonly code: RotatorErrorCode = 'ERR_ROTATOR';
  /**
   * Set when the failure is a shared dependency's (unreachable, refusing our credentials): see
   * `DependencyFailure`. Not enumerable, so a log line carries only `causeClass`, not the advice.
   */
  declare readonly dependencyFailure: DependencyFailure | undefined;
  /** `connection-refused`, `unknown-host`, `client-refused`...: the class of a shared dependency's failure, in logs too. */
  readonly causeClass?: DependencyFailureKind;

  constructor(message: string, options?: { cause?: unknown; dependencyFailure?: DependencyFailure | undefined }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    Object.defineProperty(this, 'dependencyFailure', { value: options?.dependencyFailure, enumerable: false });
    if (options?.dependencyFailure) this.causeClass = options.dependencyFailure.kind;
  }
}

/** Bad policy, environment or arguments. Always found before any network call; exit code 2. */
export class ConfigError extends RotatorError {
  static override readonly code = 'ERR_CONFIG';
  override readonly code = 'ERR_CONFIG';
  readonly issues: readonly ConfigIssue[];
  /** The policy file the issues' lines and columns are in, when the environment was read far enough to know it. */
  readonly policyFile?: string;

  constructor(issues: readonly ConfigIssue[], options: { policyFile?: string } = {}) {
    // Grouped by where they are, so a token's problems read together (tokens[2] before tokens[10]).
    const sorted = [...issues].sort((a, b) => a.path.localeCompare(b.path, 'en', { numeric: true }));
    super(formatIssues(sorted, options.policyFile));
    this.issues = sorted;
    if (options.policyFile !== undefined) this.policyFile = options.policyFile;
  }
}

function formatIssues(issues: readonly ConfigIssue[], policyFile?: string): string {
  const noun = issues.length === 1 ? 'problem' : 'problems';
  return `${issues.length} configuration ${noun}:\n${issues.map((i) => `  ${positionOf(i, policyFile)}${i.path}: ${i.message}`).join('\n')}`;
}

/**
 * `rotation.yaml:7:9: ` before a problem placed in the policy, as compilers write it, so that an
 * editor or a terminal opens the file there; nothing when the path already is that place (a syntax
 * error) or the problem is not in the file.
 */
function positionOf(issue: ConfigIssue, policyFile: string | undefined): string {
  if (issue.line === undefined || policyFile === undefined || issue.path.startsWith(`${policyFile}:`)) return '';
  return `${policyFile}:${issue.line}:${issue.column ?? 1}: `;
}

/** The authorization server refused or could not be reached. */
export class AuthError extends RotatorError {
  static override readonly code = 'ERR_AUTH';
  override readonly code = 'ERR_AUTH';
}

export type ApiOperation = 'retrieve' | 'regenerate';

/** The token service answered with an error, or could not be reached. */
export class ApiError extends RotatorError {
  static override readonly code: RotatorErrorCode = 'ERR_API';
  override readonly code: RotatorErrorCode = 'ERR_API';
  readonly op: ApiOperation;
  readonly status: number | undefined;
  readonly traceId: string | undefined;
  readonly serviceMessage: string | undefined;

  constructor(
    message: string,
    details: {
      op: ApiOperation;
      status?: number;
      traceId?: string;
      serviceMessage?: string;
      cause?: unknown;
      dependencyFailure?: DependencyFailure;
    },
  ) {
    super(message, { cause: details.cause, dependencyFailure: details.dependencyFailure });
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
  static override readonly code = 'ERR_REGENERATE_OUTCOME_UNKNOWN';
  override readonly code = 'ERR_REGENERATE_OUTCOME_UNKNOWN';
}

/**
 * The service answered 200 with a `token` field that holds nothing usable: it acted, and the new
 * secret is lost. Never followed by another regenerate in the same run.
 */
export class RegenerateAnswerUnusableError extends ApiError {
  static override readonly code = 'ERR_REGENERATE_ANSWER_UNUSABLE';
  override readonly code = 'ERR_REGENERATE_ANSWER_UNUSABLE';
}

/** The service answered 200 with a body that is not what the contract says. */
export class ApiResponseError extends ApiError {
  static override readonly code = 'ERR_API_RESPONSE';
  override readonly code = 'ERR_API_RESPONSE';
}

export class SinkError extends RotatorError {
  static override readonly code = 'ERR_SINK';
  override readonly code = 'ERR_SINK';
}

/**
 * This process no longer holds the name's lock (it was stopped for long enough that another process
 * took the lock over). Everything it would do next could conflict with the new owner, so it stops.
 */
export class LockLostError extends RotatorError {
  static override readonly code = 'ERR_LOCK_LOST';
  override readonly code = 'ERR_LOCK_LOST';
}

/**
 * The service answered a new secret with an id that cannot be used. The secret is kept in the
 * journal, and the name stops until an operator has dealt with it.
 */
export class SecretHeldError extends RotatorError {
  static override readonly code = 'ERR_SECRET_HELD';
  override readonly code = 'ERR_SECRET_HELD';
}

/**
 * A new secret was received but could not be journalled (the state disk failed): it was delivered
 * from memory as far as it could be, and what happened is in the message.
 */
export class StagingFailedError extends RotatorError {
  static override readonly code = 'ERR_STAGING_FAILED';
  override readonly code = 'ERR_STAGING_FAILED';
}

/** Another process holds the name's lock while the name is due: it was not rotated by this run. */
export class NameLockedError extends RotatorError {
  static override readonly code = 'ERR_LOCKED';
  override readonly code = 'ERR_LOCKED';
}

/**
 * The Kubernetes API refused or could not be reached: its `Status` reason and HTTP status, for the
 * caller to tell a missing object from a conflict or a permission problem.
 */
export class KubernetesError extends RotatorError {
  static override readonly code = 'ERR_KUBERNETES';
  override readonly code = 'ERR_KUBERNETES';
  readonly status: number | undefined;
  readonly reason: string | undefined;

  constructor(message: string, details: { status?: number; reason?: string; cause?: unknown } = {}) {
    super(message, { cause: details.cause });
    this.status = details.status;
    this.reason = details.reason;
  }
}

/**
 * The new token failed its verification (the service does not know it as asked, a sink holds
 * something else, or the probe with it was refused): nothing was committed, the secret stays staged.
 */
export class VerifyFailedError extends RotatorError {
  static override readonly code = 'ERR_VERIFY_FAILED';
  override readonly code = 'ERR_VERIFY_FAILED';
}

/** A failure of something every token needs (the service or the authorization server), not of this token. */
export function sharedFailure(error: unknown): boolean {
  return error instanceof RotatorError && error.dependencyFailure !== undefined;
}

/** The state store is unreadable or was written by something else; never silently reset. */
export class StateError extends RotatorError {
  static override readonly code: RotatorErrorCode = 'ERR_STATE';
  override readonly code: RotatorErrorCode = 'ERR_STATE';
}

/**
 * A stored record or journal entry the state key does not authenticate (no MAC, a MAC that does not
 * match, a plaintext secret where a key is set) or whose ids contradict the lineage: written by
 * someone else. Nothing of it is used and nothing is delivered for that name.
 */
export class StateIntegrityError extends StateError {
  static override readonly code = 'ERR_STATE_INTEGRITY';
  override readonly code = 'ERR_STATE_INTEGRITY';
}

/**
 * No state key of this run opens a secret the state holds: a configuration error (exit 2), never a
 * reason to mint a new token.
 */
export class StateKeyError extends RotatorError {
  static override readonly code = 'ERR_STATE_KEY';
  override readonly code = 'ERR_STATE_KEY';
}

/**
 * The service applied a regenerate whose answer never arrived: a new token exists whose secret
 * nobody has. Thrown when the old token no longer works either, so there is nothing to rotate from.
 */
export class OrphanedTokenError extends RotatorError {
  static override readonly code = 'ERR_ORPHANED_TOKEN';
  override readonly code = 'ERR_ORPHANED_TOKEN';
}

/**
 * Every class of ours by the code it carries: a code exists only with its class. Each key is its
 * class's `code` (`error-codes.test.ts` checks it, and that every class exported here is listed).
 * A record, not a list, because the families' codes are typed wide (see `RotatorError`): a list
 * could give the union only by reading those types, which are the union itself.
 */
export const ERROR_CLASSES = {
  ERR_ROTATOR: RotatorError,
  ERR_CONFIG: ConfigError,
  ERR_AUTH: AuthError,
  ERR_API: ApiError,
  ERR_REGENERATE_OUTCOME_UNKNOWN: RegenerateOutcomeUnknownError,
  ERR_REGENERATE_ANSWER_UNUSABLE: RegenerateAnswerUnusableError,
  ERR_API_RESPONSE: ApiResponseError,
  ERR_SINK: SinkError,
  ERR_LOCK_LOST: LockLostError,
  ERR_SECRET_HELD: SecretHeldError,
  ERR_STAGING_FAILED: StagingFailedError,
  ERR_LOCKED: NameLockedError,
  ERR_KUBERNETES: KubernetesError,
  ERR_VERIFY_FAILED: VerifyFailedError,
  ERR_STATE: StateError,
  ERR_STATE_INTEGRITY: StateIntegrityError,
  ERR_STATE_KEY: StateKeyError,
  ERR_ORPHANED_TOKEN: OrphanedTokenError,
} as const;

/** Every code an error of ours can carry: stable and documented. */
export type RotatorErrorCode = keyof typeof ERROR_CLASSES;

/** The code given to a failure that is not one of our errors. */
export const UNEXPECTED_ERROR_CODE = 'ERR_UNEXPECTED';

/** Every code an output can carry (`schema/output.schema.json`): one of ours, or `ERR_UNEXPECTED`. */
export type ErrorCode = RotatorErrorCode | typeof UNEXPECTED_ERROR_CODE;

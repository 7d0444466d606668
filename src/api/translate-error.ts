import { HTTPError, RequestError } from 'got';

import { dependencyCheck, describeFailureKind } from '../error-advice.js';
import { networkFailureKind, originOf } from '../error-helpers.js';
import { ApiError, type ApiOperation, AuthError, type DependencyFailure, RegenerateOutcomeUnknownError } from '../errors.js';
import { remoteText } from '../http/remote-text.js';
import { ResponseTooLargeError } from '../http/response-size.js';
import { scrubSecrets } from '../secret.js';
import { wrongBasePath } from './wrong-base-path.js';

/**
 * A regenerate answered with one of these was not committed (the service never commits a 429), so
 * nothing changed. Anything else may have been committed.
 */
export const DEFINITE_REFUSALS = new Set([400, 401, 403, 404, 409, 422, 429]);

/** These network errors happen before a request is sent: the service cannot have acted on it. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
]);

/**
 * The service's own words from an error body: `{message}`, `{code, message}` or `{error}`; else none.
 * They reach the table, the state and webhooks, so they are masked and kept short: a careless
 * service has been seen to echo the very token it just minted.
 */
export function serviceMessageOf(body: unknown): string | undefined {
  if (typeof body !== 'string' || body === '') return undefined;
  let text: string | undefined;
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    const candidate = parsed?.message ?? parsed?.error;
    if (typeof candidate === 'string') text = candidate;
  } catch {
    // A non-JSON body (a proxy's HTML page) says nothing we can trust to be free of secrets.
  }
  return text === undefined ? undefined : remoteText(text);
}

/**
 * got's errors carry the request options, headers included (the bearer token), and sometimes the
 * response body (a new secret). Only this stripped copy may travel as `cause`.
 */
function sanitizedCause(error: RequestError): Error {
  const cause = new Error(scrubSecrets(error.message));
  cause.name = error.name;
  (cause as Error & { code?: string }).code = error.code;
  return cause;
}

/** `X-Axiom-Trace-Id`, when it looks like one: a header is the service's text too. */
export function traceIdOf(headers: Record<string, string | string[] | undefined> | undefined): string | undefined {
  const raw = headers?.['x-axiom-trace-id'];
  const value = Array.isArray(raw) ? raw[0] : raw;
  return value !== undefined && /^[A-Za-z0-9_-]{1,64}$/.test(value) ? value : undefined;
}

/**
 * One translation from got to our errors, at the one boundary where got is used. An access token
 * the authorization server would not give comes back as that server's own error: no request was
 * sent, and the token service is not to blame.
 */
export function translateApiError(
  error: unknown,
  op: ApiOperation,
  subject: string,
  /** What the request's tries saw before this error: where it went, and the last network error code. */
  seen: { url?: string; code?: string } = {},
): ApiError | AuthError {
  if (error instanceof ApiError) return error;
  if (error instanceof AuthError) return error;
  if (error instanceof RequestError && error.cause instanceof AuthError) return error.cause;
  // Node >= 24.20 ends got's retry of a refused or unresolved connection with this bare error, the
  // real one lost (sindresorhus/got#2469): the code the earlier try saw says what happened.
  const bare = (error as { code?: unknown })?.code;
  if (!(error instanceof RequestError) && bare === 'ERR_SOCKET_CLOSED_BEFORE_CONNECTION') {
    const kind = networkFailureKind(seen.code) ?? 'unreachable';
    const dependencyFailure: DependencyFailure = {
      dependency: 'token service',
      kind,
      target: originOf(seen.url),
      check: dependencyCheck('token service', kind),
    };
    return new ApiError(`cannot reach the token service at ${dependencyFailure.target}: ${describeFailureKind(kind, seen.code ?? bare)}`, {
      op,
      dependencyFailure,
    });
  }
  if (error instanceof ResponseTooLargeError) {
    const message = `${op} ${subject}: ${error.message}`;
    // The service may have acted before its answer grew too large to read.
    if (op === 'regenerate')
      return new RegenerateOutcomeUnknownError(`${message}; the service may or may not have regenerated the token`, { op });
    return new ApiError(message, { op });
  }
  if (!(error instanceof RequestError)) {
    return new ApiError(`${op} ${subject}: ${scrubSecrets(String((error as Error)?.message ?? error))}`, { op });
  }
  const cause = sanitizedCause(error);
  if (error instanceof HTTPError) {
    const status = error.response.statusCode;
    const traceId = traceIdOf(error.response.headers);
    const serviceMessage = serviceMessageOf(error.response.body);
    const message =
      `${op} ${subject}: the service answered ${status}` +
      (serviceMessage ? `: ${serviceMessage}` : '') +
      hint(status) +
      (traceId ? ` (trace id ${traceId})` : '');
    // An API answers an unknown id in its own words; a web page (a proxy's, a web server's) says
    // the request never reached the API: the same for every token, however many there are.
    if (status === 404 && isWebPage(error.response.headers)) {
      return wrongBasePath(
        seen.url ?? originOf(error.options?.url),
        `the token service at ${originOf(seen.url)} answered 404 with a web page, not the API's answer`,
        op,
      );
    }
    if (status === 401) {
      // The same refusal for every token: said without the token, so that a run says it once.
      const dependencyFailure = sharedFailure(error, 'access-refused');
      return new ApiError(
        `the token service at ${dependencyFailure.target} answered 401${serviceMessage ? `: ${serviceMessage}` : ''}; ${dependencyFailure.check}`,
        { op, status, traceId, serviceMessage, cause, dependencyFailure },
      );
    }
    const details = { op, status, traceId, serviceMessage, cause };
    if (op === 'regenerate' && !DEFINITE_REFUSALS.has(status)) return new RegenerateOutcomeUnknownError(message, details);
    return new ApiError(message, details);
  }
  const code = error.code;
  const kind = networkFailureKind(code);
  if (kind) {
    // Nothing was sent: the same for every token, so the message does not name one.
    const dependencyFailure = sharedFailure(error, kind);
    return new ApiError(`cannot reach the token service at ${dependencyFailure.target}: ${describeFailureKind(kind, code)}`, {
      op,
      cause,
      dependencyFailure,
    });
  }
  const message = `${op} ${subject}: ${error.name === 'TimeoutError' ? `no answer in time (${code})` : `request failed (${code})`}`;
  if (op === 'regenerate' && !NOT_SENT_CODES.has(code)) {
    return new RegenerateOutcomeUnknownError(`${message}; the service may or may not have regenerated the token`, { op, cause });
  }
  return new ApiError(message, { op, cause });
}

function isWebPage(headers: Record<string, string | string[] | undefined>): boolean {
  const type = headers['content-type'];
  return /^\s*text\/html\b/i.test(Array.isArray(type) ? (type[0] ?? '') : (type ?? ''));
}

function sharedFailure(error: RequestError, kind: DependencyFailure['kind']): DependencyFailure {
  return { dependency: 'token service', kind, target: originOf(error.options?.url), check: dependencyCheck('token service', kind) };
}

function hint(status: number): string {
  switch (status) {
    case 401:
      return '; the access token was refused: check the OAuth client or ROTATOR_ACCESS_TOKEN';
    case 403:
      return '; the caller lacks a permission (apiTokens read to retrieve, update to regenerate) or the org id';
    case 404:
      return '; no token with this id: if it was replaced outside token-rotator, set its new id in the policy';
    case 429:
      return '; rate limited';
    default:
      return '';
  }
}

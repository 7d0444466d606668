import type { Got, PlainResponse } from 'got';

import type { AccessTokenSource } from '../auth/access-token-source.js';
import type { Clock } from '../clock.js';
import { tokenIdProblem } from '../common/token-id.js';
import { ApiError, type ApiOperation, ApiResponseError, RegenerateAnswerUnusableError, RegenerateOutcomeUnknownError } from '../errors.js';
import { createHttpStack } from '../http/http-stack.js';
import { describeRedirect, followSameOriginOnly, isRedirect } from '../http/redirect-policy.js';
import type { Logger } from '../log/logger.js';
import { Secret } from '../secret.js';
import { type RateLimitPacer, rateLimitPacer } from './rate-limit-pacer.js';
import { retryDelayMs } from './retry-delay.js';
import { parseExpiry, readRegenerateAnswer, type RotationTimes, type ServiceToken, tokenBodySchema } from './service-token.js';
import { traceIdOf, translateApiError } from './translate-error.js';

/** What a regenerate gave: a new token we can track, or a secret whose id we cannot use. */
export type RegeneratedToken =
  | {
      kind: 'tracked';
      id: string;
      /** As the service answered it; absent when it did not say. */
      name: string | undefined;
      expiresAt: Date | null;
      secret: Secret;
    }
  /** The service answered a secret with an id that is missing or not a plain path segment. */
  | { kind: 'untrackable'; problem: string; secret: Secret };

export interface TokenServiceClientOptions {
  apiUrl: URL;
  auth: AccessTokenSource;
  /** Sent as `x-axiom-org-id`, which the real service needs with a personal access token. */
  orgId?: string | undefined;
  timeoutMs: number;
  /** The service's clock, for `X-RateLimit-Reset` (epoch seconds on its clock). */
  clock: Clock;
  logger: Logger;
  /** Tries of a retrieve after the first; regenerate is only ever retried after a 429. */
  retries?: number;
  random?: () => number;
  /** Told of every answer (its status) and every request that got none ('error'): metrics, readiness. */
  onResponse?: (op: ApiOperation, status: number | 'error') => void;
  /** Told of every answer's `Date` header, to keep the service's clock. */
  onServiceDate?: (dateHeader: string | undefined) => void;
  /**
   * The run's HTTP stack (keep-alive agents, size bound), shared with the authorization server's
   * client; its own when not given.
   */
  http?: Got;
  /** Paces requests by the service's rate limit headers; one per client by default. */
  pacer?: RateLimitPacer;
}

export interface TokenServiceClient {
  retrieve(id: string, options?: { signal?: AbortSignal }): Promise<ServiceToken>;
  regenerate(id: string, times: RotationTimes, options?: { signal?: AbortSignal }): Promise<RegeneratedToken>;
}

const USER_AGENT = 'token-rotator';
const RETRYABLE_STATUS = [408, 429, 500, 502, 503, 504, 521, 522, 524];

interface RequestContext extends Record<string, unknown> {
  op: ApiOperation;
  /** The token the request is about: named in the retry lines. */
  id: string;
  /** The wait before the next try, as computed for it: told in the retry line. */
  retryDelayMs?: number;
  accessToken?: Secret;
  authRetried?: boolean;
  /** This try's place in the pacer's order (see `rateLimitPacer`). */
  sent?: number;
  /**
   * The network error code of the last try that got no answer. An object, because got copies the
   * context for each try: Node >= 24.20 ends the retry with a bare error that lost it (got#2469).
   */
  seen: { code?: string };
}

/**
 * got hands back a redirect it was told not to follow as an answer like any other: it is refused
 * here, by name, with where it pointed (its origin only: a path may hold a secret).
 */
function redirectRefused(op: ApiOperation, subject: string, response: PlainResponse, trace: string): string {
  return `${op} ${subject}: the service answered ${describeRedirect(response)}, not followed: credentials never leave ROTATOR_API_URL's origin${trace}`;
}

/** The token service API (v2) over got: both endpoints, auth, retries, error translation. */
export function createTokenServiceClient(options: TokenServiceClientOptions): TokenServiceClient {
  const { auth, clock, logger } = options;
  const random = options.random ?? Math.random;
  const base = new URL(options.apiUrl.href.endsWith('/') ? options.apiUrl.href : `${options.apiUrl.href}/`);
  const pacer = options.pacer ?? rateLimitPacer(clock);

  const stack = options.http ?? createHttpStack({ timeoutMs: options.timeoutMs });
  const http: Got = stack.extend({
    prefixUrl: new URL('v2/', base).href,
    timeout: { request: options.timeoutMs },
    responseType: 'text',
    headers: { 'user-agent': USER_AGENT, accept: 'application/json', ...(options.orgId ? { 'x-axiom-org-id': options.orgId } : {}) },
    // The bearer never leaves the configured origin, whatever the service answers.
    followRedirect: followSameOriginOnly(base),
    retry: {
      limit: options.retries ?? 4,
      methods: ['GET'],
      statusCodes: RETRYABLE_STATUS,
      maxRetryAfter: 120_000,
      calculateDelay: ({ attemptCount, computedValue, retryAfter, error }) => {
        if (!error.response) (error.options.context as RequestContext).seen.code = error.code;
        const delay = retryDelayMs({
          attemptCount,
          computedValue,
          retryAfterMs: retryAfter,
          status: error.response?.statusCode,
          headers: error.response?.headers,
          nowMs: clock.now().getTime(),
          random: random(),
        });
        // beforeRetry is not told the delay: it reads it here.
        (error.options.context as RequestContext).retryDelayMs = delay;
        return delay;
      },
    },
    hooks: {
      beforeRequest: [
        async (request) => {
          const context = request.context as RequestContext;
          const url = request.url instanceof URL ? request.url : new URL(String(request.url));
          // Defence in depth behind the redirect rule: a request to any other origin goes bare.
          if (url.origin !== base.origin) {
            delete request.headers.authorization;
            return;
          }
          const token = await auth.getAccessToken();
          context.accessToken = token;
          request.headers.authorization = `Bearer ${token.reveal()}`;
          // Last, right before it goes: waits while the service's rate limit budget is spent.
          context.sent = await pacer.beforeSend(request.signal ?? undefined, (waitMs) => {
            const fields = { op: context.op, id: context.id, waitMs };
            logger.info(
              fields,
              `rate limit of the token service spent; holding back ${(waitMs / 1000).toFixed(1)} s until its window turns (${context.op} of token ${context.id})`,
            );
          });
        },
      ],
      afterResponse: [
        (response, retryWithMergedOptions) => {
          const context = response.request.options.context as RequestContext;
          if (context.sent !== undefined) pacer.observe(context.sent, response.headers);
          options.onResponse?.(context.op, response.statusCode);
          options.onServiceDate?.(response.headers.date);
          logger.debug({ op: context.op, status: response.statusCode, traceId: traceIdOf(response.headers) }, 'token service answered');
          // An access token can be revoked or expire early: fetch a new one once, then give up.
          if (response.statusCode === 401 && !context.authRetried && context.accessToken && auth.invalidate(context.accessToken)) {
            return retryWithMergedOptions({ context: { authRetried: true } });
          }
          return response;
        },
      ],
      beforeError: [
        (error) => {
          const context = error.options.context as RequestContext;
          if (!error.response) {
            options.onResponse?.(context.op, 'error');
            if (context.sent !== undefined) pacer.observe(context.sent, undefined);
          }
          return error;
        },
      ],
      beforeRetry: [
        (error, retryCount) => {
          const { op, id, retryDelayMs: waitMs, sent } = error.options.context as RequestContext;
          if (!error.response && sent !== undefined) pacer.observe(sent, undefined);
          const status = error.response?.statusCode;
          const wait = waitMs === undefined ? 'a moment' : `${(waitMs / 1000).toFixed(1)} s`;
          const fields = { op, id, status, code: error.code, retry: retryCount, waitMs };
          // A rate limit is the service pacing us, not a fault: said at info, with what it costs.
          if (status === 429) logger.info(fields, `rate limited by the token service; trying again in ${wait} (${op} of token ${id})`);
          else
            logger.warn(fields, `token service request failed (${status ?? error.code}); trying again in ${wait} (${op} of token ${id})`);
        },
      ],
    },
  });

  /**
   * Regenerate's own rules, merged into the options once, not at every request (got's option merge
   * costs more than the rest of building a request).
   */
  const regenerateHttp: Got = http.extend({
    // A redirect of a non-idempotent request is never followed, not even on the same origin.
    followRedirect: false,
    // A 429 is never committed by the service, so it alone may be sent again; a timeout,
    // reset or 5xx may have been committed and is left to the caller to reconcile.
    retry: { limit: 3, methods: ['POST'], statusCodes: [429], errorCodes: [] },
  });

  /** An id becomes one URL path segment: refuse one that would address anything else, before sending. */
  function pathSegment(id: string, op: ApiOperation): string {
    const problem = tokenIdProblem(id);
    if (problem) throw new ApiError(`${op} token ${JSON.stringify(id.slice(0, 80))}: not sent, the id ${problem}`, { op });
    return encodeURIComponent(id);
  }

  function parseJson(body: string, op: ApiOperation, subject: string, traceId: string | undefined): unknown {
    try {
      return JSON.parse(body);
    } catch {
      // Never quote the body: for regenerate it holds the new secret.
      const message = `${op} ${subject}: the service answered 200 with a body that is not JSON${traceId ? ` (trace id ${traceId})` : ''}`;
      if (op === 'regenerate') throw new RegenerateOutcomeUnknownError(message, { op, status: 200, traceId });
      throw new ApiResponseError(message, { op, status: 200, traceId });
    }
  }

  return {
    async retrieve(id, requestOptions = {}) {
      const subject = `token ${id}`;
      const context: RequestContext = { op: 'retrieve', id, seen: {} };
      try {
        const response = await http.get(`tokens/${pathSegment(id, 'retrieve')}`, { context, signal: requestOptions.signal });
        const traceId = traceIdOf(response.headers);
        const trace = traceId ? ` (trace id ${traceId})` : '';
        if (isRedirect(response.statusCode))
          throw new ApiError(redirectRefused('retrieve', subject, response, trace), {
            op: 'retrieve',
            status: response.statusCode,
            traceId,
          });
        const parsed = tokenBodySchema.safeParse(parseJson(response.body, 'retrieve', subject, traceId));
        if (!parsed.success) {
          const lacking = parsed.error.issues.map((i) => i.path.join('.')).join(', ');
          throw new ApiResponseError(`retrieve ${subject}: the answer lacks ${lacking}${trace}`, { op: 'retrieve', status: 200, traceId });
        }
        // An answer about another token would make us rotate it and deliver its successor here.
        if (parsed.data.id !== id) {
          throw new ApiResponseError(
            `retrieve ${subject}: the service answered with token ${JSON.stringify(parsed.data.id.slice(0, 80))} instead; refusing to act on it${trace}`,
            { op: 'retrieve', status: 200, traceId },
          );
        }
        const expiresAt = parseExpiry(parsed.data.expiresAt);
        if (expiresAt === 'invalid') {
          throw new ApiResponseError(
            `retrieve ${subject}: expiresAt ${JSON.stringify(parsed.data.expiresAt)} is not a date we can use${trace}`,
            {
              op: 'retrieve',
              status: 200,
              traceId,
            },
          );
        }
        return { id, name: parsed.data.name, expiresAt };
      } catch (error) {
        throw translateApiError(error, 'retrieve', subject, { url: base.href, code: context.seen.code });
      }
    },

    async regenerate(id, times, requestOptions = {}) {
      const subject = `token ${id}`;
      const context: RequestContext = { op: 'regenerate', id, seen: {} };
      try {
        const response = await regenerateHttp.post(`tokens/${pathSegment(id, 'regenerate')}/regenerate`, {
          context,
          signal: requestOptions.signal,
          json: {
            existingTokenExpiresAt: times.existingTokenExpiresAt.toISOString(),
            newTokenExpiresAt: times.newTokenExpiresAt ? times.newTokenExpiresAt.toISOString() : null,
          },
        });
        const traceId = traceIdOf(response.headers);
        const trace = traceId ? ` (trace id ${traceId})` : '';
        // A hostile hop could have acted on it before redirecting: what happened is unknown.
        if (isRedirect(response.statusCode)) {
          throw new RegenerateOutcomeUnknownError(redirectRefused('regenerate', subject, response, trace), {
            op: 'regenerate',
            status: response.statusCode,
            traceId,
          });
        }
        const answer = readRegenerateAnswer(parseJson(response.body, 'regenerate', subject, traceId));
        switch (answer.kind) {
          case 'no-token':
            throw new RegenerateOutcomeUnknownError(`regenerate ${subject}: the service answered 200 without a new token${trace}`, {
              op: 'regenerate',
              status: 200,
              traceId,
            });
          case 'unusable-token':
            throw new RegenerateAnswerUnusableError(`regenerate ${subject}: the service answered 200, but ${answer.problem}${trace}`, {
              op: 'regenerate',
              status: 200,
              traceId,
            });
          case 'untrackable':
            return {
              kind: 'untrackable',
              problem: `the service answered a new secret, but ${answer.problem}${trace}`,
              secret: new Secret(answer.token),
            };
          case 'usable': {
            // The secret is in hand: from here, odd details are logged and guessed, never fatal.
            const secret = new Secret(answer.token);
            if (answer.oddities.length > 0) {
              logger.warn(
                { id: answer.id, traceId, oddities: answer.oddities },
                'regenerate answered odd details; the secret is kept, and the expiry asked for is assumed where unreadable',
              );
            }
            const expiresAt = answer.expiresAt === 'invalid' ? times.newTokenExpiresAt : answer.expiresAt;
            return { kind: 'tracked', id: answer.id, name: answer.name, expiresAt, secret };
          }
        }
      } catch (error) {
        throw translateApiError(error, 'regenerate', subject, { url: base.href, code: context.seen.code });
      }
    },
  };
}

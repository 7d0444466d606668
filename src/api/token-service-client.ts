import got, { type Got } from 'got';

import type { AccessTokenSource } from '../auth/access-token-source.js';
import type { Clock } from '../clock.js';
import { type ApiOperation, ApiResponseError, RegenerateOutcomeUnknownError } from '../errors.js';
import type { Logger } from '../log/logger.js';
import type { RotationTimes } from '../policy/rotation-times.js';
import { Secret } from '../secret.js';
import { retryDelayMs } from './retry-delay.js';
import { parseExpiry, regenerateBodySchema, type ServiceToken, tokenBodySchema } from './service-token.js';
import { traceIdOf, translateApiError } from './translate-error.js';

export interface RegeneratedToken extends ServiceToken {
  secret: Secret;
}

export interface TokenServiceClientOptions {
  apiUrl: URL;
  auth: AccessTokenSource;
  /** Sent as `x-axiom-org-id`, which the real service needs with a personal access token. */
  orgId?: string | undefined;
  timeoutMs: number;
  clock: Clock;
  logger: Logger;
  /** Tries of a retrieve after the first; regenerate is only ever retried after a 429. */
  retries?: number;
  random?: () => number;
  /** Told of every answer (its status) and every request that got none ('error'): metrics, readiness. */
  onResponse?: (op: ApiOperation, status: number | 'error') => void;
}

export interface TokenServiceClient {
  retrieve(id: string, options?: { signal?: AbortSignal }): Promise<ServiceToken>;
  regenerate(id: string, times: RotationTimes, options?: { signal?: AbortSignal }): Promise<RegeneratedToken>;
}

const USER_AGENT = 'token-rotator';
const RETRYABLE_STATUS = [408, 429, 500, 502, 503, 504, 521, 522, 524];

interface RequestContext extends Record<string, unknown> {
  op: ApiOperation;
  accessToken?: Secret;
  authRetried?: boolean;
}

/** The token service API (v2) over got: both endpoints, auth, retries, error translation. */
export function createTokenServiceClient(options: TokenServiceClientOptions): TokenServiceClient {
  const { auth, clock, logger } = options;
  const random = options.random ?? Math.random;
  const base = new URL(options.apiUrl.href.endsWith('/') ? options.apiUrl.href : `${options.apiUrl.href}/`);

  const http: Got = got.extend({
    prefixUrl: new URL('v2/', base).href,
    timeout: { request: options.timeoutMs },
    responseType: 'text',
    headers: { 'user-agent': USER_AGENT, accept: 'application/json', ...(options.orgId ? { 'x-axiom-org-id': options.orgId } : {}) },
    retry: {
      limit: options.retries ?? 4,
      methods: ['GET'],
      statusCodes: RETRYABLE_STATUS,
      maxRetryAfter: 120_000,
      calculateDelay: ({ attemptCount, computedValue, retryAfter, error }) =>
        retryDelayMs({
          attemptCount,
          computedValue,
          retryAfterMs: retryAfter,
          status: error.response?.statusCode,
          headers: error.response?.headers,
          nowMs: clock.now().getTime(),
          random: random(),
        }),
    },
    hooks: {
      beforeRequest: [
        async (request) => {
          const context = request.context as RequestContext;
          const token = await auth.getAccessToken();
          context.accessToken = token;
          request.headers.authorization = `Bearer ${token.reveal()}`;
        },
      ],
      afterResponse: [
        (response, retryWithMergedOptions) => {
          const context = response.request.options.context as RequestContext;
          options.onResponse?.(context.op, response.statusCode);
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
          if (!error.response) options.onResponse?.((error.options.context as RequestContext).op, 'error');
          return error;
        },
      ],
      beforeRetry: [
        (error, retryCount) => {
          logger.warn(
            { op: (error.options.context as RequestContext).op, status: error.response?.statusCode, code: error.code, retry: retryCount },
            'token service request failed; trying again',
          );
        },
      ],
    },
  });

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

  function toServiceToken(
    body: { id: string; name: string; expiresAt?: string | null | undefined },
    op: ApiOperation,
    subject: string,
    traceId: string | undefined,
  ): ServiceToken {
    const expiresAt = parseExpiry(body.expiresAt);
    if (expiresAt === 'invalid') {
      throw new ApiResponseError(`${op} ${subject}: expiresAt ${JSON.stringify(body.expiresAt)} is not a date`, {
        op,
        status: 200,
        traceId,
      });
    }
    return { id: body.id, name: body.name, expiresAt };
  }

  return {
    async retrieve(id, requestOptions = {}) {
      const subject = `token ${id}`;
      const context: RequestContext = { op: 'retrieve' };
      try {
        const response = await http.get(`tokens/${encodeURIComponent(id)}`, { context, signal: requestOptions.signal });
        const traceId = traceIdOf(response.headers);
        const parsed = tokenBodySchema.safeParse(parseJson(response.body, 'retrieve', subject, traceId));
        if (!parsed.success) {
          throw new ApiResponseError(
            `retrieve ${subject}: the answer lacks ${parsed.error.issues.map((i) => i.path.join('.')).join(', ')}`,
            { op: 'retrieve', status: 200, traceId },
          );
        }
        return toServiceToken(parsed.data, 'retrieve', subject, traceId);
      } catch (error) {
        throw translateApiError(error, 'retrieve', subject);
      }
    },

    async regenerate(id, times, requestOptions = {}) {
      const subject = `token ${id}`;
      const context: RequestContext = { op: 'regenerate' };
      try {
        const response = await http.post(`tokens/${encodeURIComponent(id)}/regenerate`, {
          context,
          signal: requestOptions.signal,
          json: {
            existingTokenExpiresAt: times.existingTokenExpiresAt.toISOString(),
            newTokenExpiresAt: times.newTokenExpiresAt ? times.newTokenExpiresAt.toISOString() : null,
          },
          // A 429 is never committed by the service, so it alone may be sent again; a timeout,
          // reset or 5xx may have been committed and is left to the caller to reconcile.
          retry: { limit: 3, methods: ['POST'], statusCodes: [429], errorCodes: [] },
        });
        const traceId = traceIdOf(response.headers);
        const parsed = regenerateBodySchema.safeParse(parseJson(response.body, 'regenerate', subject, traceId));
        if (!parsed.success || parsed.data.token === undefined) {
          throw new RegenerateOutcomeUnknownError(
            `regenerate ${subject}: the service answered 200 without a new token${traceId ? ` (trace id ${traceId})` : ''}`,
            { op: 'regenerate', status: 200, traceId },
          );
        }
        const { token, ...meta } = parsed.data;
        const secret = new Secret(token);
        // The secret is in hand: nothing from here may throw it away over a malformed detail.
        const expiresAt = parseExpiry(meta.expiresAt);
        if (expiresAt === 'invalid') {
          logger.warn({ id: meta.id, traceId }, 'regenerate answered an unreadable expiresAt; assuming the one requested');
        }
        return { id: meta.id, name: meta.name, expiresAt: expiresAt === 'invalid' ? times.newTokenExpiresAt : expiresAt, secret };
      } catch (error) {
        throw translateApiError(error, 'regenerate', subject);
      }
    },
  };
}

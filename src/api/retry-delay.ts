/** Headers as got gives them: lower-case names, string or list values. */
export type ResponseHeaders = Readonly<Record<string, string | string[] | undefined>>;

export const RETRY_BASE_MS = 200;
export const RETRY_BACKOFF_CAP_MS = 5_000;
/** The longest we wait for a rate limit to reset before giving up and reporting it. */
export const MAX_RATE_LIMIT_WAIT_MS = 65_000;

function header(headers: ResponseHeaders | undefined, name: string): string | undefined {
  const value = headers?.[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Milliseconds until `X-RateLimit-Reset` (UTC epoch seconds), or undefined when absent or past. */
export function rateLimitResetDelayMs(headers: ResponseHeaders | undefined, nowMs: number): number | undefined {
  const reset = Number(header(headers, 'x-ratelimit-reset'));
  if (!Number.isFinite(reset) || reset <= 0) return undefined;
  const delay = reset * 1000 - nowMs;
  return delay > 0 ? delay : undefined;
}

export interface RetryInput {
  /** 1 for the first retry. */
  attemptCount: number;
  /** got's own verdict: 0 means its rules (limit, method, status, error code) say no retry. */
  computedValue: number;
  /** From `Retry-After`, already in milliseconds, when got found one. */
  retryAfterMs: number | undefined;
  status: number | undefined;
  headers: ResponseHeaders | undefined;
  nowMs: number;
  /** In [0, 1): spreads retries of many processes apart. */
  random: number;
}

/**
 * How long to wait before the next try, 0 for no retry. `Retry-After` wins when present; a 429
 * otherwise waits for `X-RateLimit-Reset` (give up when that is further than we would wait);
 * everything else backs off exponentially from 200 ms with jitter, as the official SDKs do.
 */
export function retryDelayMs(input: RetryInput): number {
  if (input.computedValue === 0) return 0;
  if (input.retryAfterMs !== undefined && input.retryAfterMs > 0) return input.retryAfterMs;
  if (input.status === 429) {
    const reset = rateLimitResetDelayMs(input.headers, input.nowMs);
    if (reset !== undefined) return reset > MAX_RATE_LIMIT_WAIT_MS ? 0 : reset + 100;
  }
  const backoff = Math.min(RETRY_BASE_MS * 2 ** (input.attemptCount - 1), RETRY_BACKOFF_CAP_MS);
  return Math.round(backoff * (0.5 + input.random / 2));
}

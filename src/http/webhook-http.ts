import got, { type Got } from 'got';

import { limitResponseSize } from './response-size.js';

/**
 * The HTTP client of every outgoing webhook (notifications, reload hooks): a timeout, retries on
 * network errors and 5xx (a POST here is safe to repeat: receivers get the same event again), and a
 * bounded answer. Callers add the same-origin redirect rule per URL.
 */
export function webhookHttp(options: { timeoutMs?: number; retries?: number } = {}): Got {
  return got.extend({
    timeout: { request: options.timeoutMs ?? 5000 },
    retry: { limit: options.retries ?? 3, methods: ['POST'], statusCodes: [408, 429, 500, 502, 503, 504], backoffLimit: 4000 },
    headers: { 'user-agent': 'token-rotator' },
    handlers: [limitResponseSize()],
  });
}

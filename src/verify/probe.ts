import { setTimeout as delay } from 'node:timers/promises';

import got from 'got';

import { followSameOriginOnly, isRedirect } from '../http/redirect-policy.js';
import { limitResponseSize } from '../http/response-size.js';
import type { Secret } from '../secret.js';
import type { VerifyProbe } from './verify-config.js';

export type ProbeResult = { ok: true; status: number } | { ok: false; message: string };

/** Bounded answers: a probe URL is the user's, and its body is never needed. */
const http = got.extend({ handlers: [limitResponseSize()] });

/** Between tries: a service that has not yet seen the token usually has within seconds. */
const SPACING_MS = [1000, 2000, 4000, 8000];

/**
 * Asks the probe URL with the new token. Whatever answers, its body is never read into a message or a
 * log: a probe URL may answer with the caller's own details. Redirects are followed only within the
 * URL's origin, since the token goes with each request.
 */
export async function probeNewToken(
  probe: VerifyProbe,
  secret: Secret,
  options: { signal?: AbortSignal; sleep?: (ms: number) => Promise<void> } = {},
): Promise<ProbeResult> {
  const sleep = options.sleep ?? ((ms: number) => delay(ms));
  let last = '';
  for (let attempt = 0; attempt <= probe.retries; attempt++) {
    if (attempt > 0) await sleep(SPACING_MS[Math.min(attempt - 1, SPACING_MS.length - 1)]!);
    options.signal?.throwIfAborted();
    try {
      const response = await http(probe.url, {
        method: 'GET',
        headers: { authorization: `Bearer ${secret.reveal()}`, 'user-agent': 'token-rotator' },
        timeout: { request: probe.timeoutMs },
        retry: { limit: 0 },
        throwHttpErrors: false,
        followRedirect: followSameOriginOnly(probe.url),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      if (probe.expectStatus.includes(response.statusCode)) return { ok: true, status: response.statusCode };
      last = isRedirect(response.statusCode)
        ? `${probe.url.origin} answered a redirect to another origin (${response.statusCode}), not followed`
        : `${probe.url.origin}${probe.url.pathname} answered ${response.statusCode}, expected ${probe.expectStatus.join(' or ')}`;
      // A refusal of the token is an answer: trying again only helps while the service may not know it yet.
    } catch (error) {
      if (options.signal?.aborted) throw error;
      last = `${probe.url.origin}${probe.url.pathname} could not be asked: ${(error as { code?: string }).code ?? (error as Error).message}`;
    }
  }
  return { ok: false, message: `the probe with the new token failed after ${probe.retries + 1} tries: ${last}` };
}

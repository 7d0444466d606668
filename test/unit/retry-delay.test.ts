import { describe, expect, it } from 'vitest';

import { MAX_RATE_LIMIT_WAIT_MS, rateLimitResetDelayMs, retryDelayMs, type RetryInput } from '../../src/api/retry-delay.js';

const NOW = Date.parse('2026-11-22T12:00:00Z');
const base: RetryInput = {
  attemptCount: 1,
  computedValue: 1000,
  retryAfterMs: undefined,
  status: 503,
  headers: {},
  nowMs: NOW,
  random: 0.5,
};

describe('retryDelayMs', () => {
  it.each([
    { name: 'no retry when got says its rules forbid one', input: { computedValue: 0 }, delay: 0 },
    {
      name: 'Retry-After wins over everything',
      input: { retryAfterMs: 7000, status: 429, headers: { 'x-ratelimit-reset': String(NOW / 1000 + 30) } },
      delay: 7000,
    },
    {
      name: 'a 429 waits until X-RateLimit-Reset, plus a little',
      input: { status: 429, headers: { 'x-ratelimit-reset': String(NOW / 1000 + 12) } },
      delay: 12_100,
    },
    {
      name: 'a 429 whose reset is too far away gives up',
      input: { status: 429, headers: { 'x-ratelimit-reset': String(NOW / 1000 + MAX_RATE_LIMIT_WAIT_MS / 1000 + 5) } },
      delay: 0,
    },
    {
      name: 'a 429 with a reset in the past backs off normally',
      input: { status: 429, headers: { 'x-ratelimit-reset': String(NOW / 1000 - 5) } },
      delay: 150,
    },
    { name: 'the first retry of a 5xx waits about 200 ms', input: { attemptCount: 1, random: 0.5 }, delay: 150 },
    { name: 'the backoff doubles', input: { attemptCount: 3, random: 0.999999 }, delay: 800 },
    { name: 'the backoff is capped at 5 s', input: { attemptCount: 12, random: 0.999999 }, delay: 5000 },
    { name: 'jitter never waits less than half the backoff', input: { attemptCount: 2, random: 0 }, delay: 200 },
  ])('$name', ({ input, delay }) => {
    expect(retryDelayMs({ ...base, ...input })).toBe(delay);
  });
});

describe('rateLimitResetDelayMs', () => {
  it('reads epoch seconds, also as a list', () => {
    expect(rateLimitResetDelayMs({ 'x-ratelimit-reset': [String(NOW / 1000 + 2)] }, NOW)).toBe(2000);
  });
  it.each([undefined, 'soon', '0', ''])('ignores %j', (value) => {
    expect(rateLimitResetDelayMs({ 'x-ratelimit-reset': value }, NOW)).toBeUndefined();
  });
});

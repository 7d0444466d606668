import { createServer, type Server } from 'node:http';

import { afterEach, describe, expect, it } from 'vitest';

import { type RateLimitPacer, rateLimitPacer, RESET_MARGIN_MS } from '../../src/api/rate-limit-pacer.js';
import type { Clock } from '../../src/clock.js';
import { localServerClient } from '../helpers/rotator-client.js';

/** A clock that only moves when a paced request sleeps: waits are counted, never spent. */
function fakeTime(startMs: number) {
  let nowMs = startMs;
  const sleeps: number[] = [];
  const clock: Clock = { now: () => new Date(nowMs) };
  const sleep = async (ms: number) => {
    sleeps.push(ms);
    nowMs += ms;
  };
  return { clock, sleep, sleeps, advance: (ms: number) => (nowMs += ms), now: () => nowMs };
}

/** How many requests the pacer lets go before `windowEnd`: it sends until one has to wait past it. */
async function sendsBeforeReset(pacer: RateLimitPacer, time: ReturnType<typeof fakeTime>, windowEnd: number): Promise<number> {
  let sent = 0;
  for (;;) {
    await pacer.beforeSend();
    if (time.now() >= windowEnd) return sent;
    sent += 1;
  }
}

const headers = (limit: number, remaining: number, resetMs: number) => ({
  'x-ratelimit-limit': String(limit),
  'x-ratelimit-remaining': String(remaining),
  'x-ratelimit-reset': String(resetMs / 1000),
});

describe('the rate limit pacer', () => {
  const WINDOW_END = 1_800_000_060_000; // a whole minute, in ms

  it('never waits without rate limit headers, nor while the budget has room', async () => {
    const time = fakeTime(WINDOW_END - 30_000);
    const pacer = rateLimitPacer(time.clock, { sleep: time.sleep });
    for (let i = 0; i < 50; i++) pacer.observe(await pacer.beforeSend(), {});
    const generous = rateLimitPacer(time.clock, { sleep: time.sleep });
    for (let i = 0; i < 50; i++) generous.observe(await generous.beforeSend(), headers(6000, 5999 - i, WINDOW_END));
    expect(time.sleeps).toEqual([]);
  });

  it('once Remaining is spent, waits for X-RateLimit-Reset (plus a margin), then sends a new window’s worth', async () => {
    const time = fakeTime(WINDOW_END - 10_000);
    const pacer = rateLimitPacer(time.clock, { sleep: time.sleep });
    const sentAt: number[] = [];
    for (let i = 0; i < 5; i++) {
      const place = await pacer.beforeSend();
      sentAt.push(time.now());
      pacer.observe(place, headers(3, Math.max(0, 2 - i), WINDOW_END));
    }
    // Three in the first window, then a wait until the reset, then the rest.
    expect(sentAt.filter((at) => at < WINDOW_END)).toHaveLength(3);
    expect(sentAt.slice(3).every((at) => at >= WINDOW_END + RESET_MARGIN_MS)).toBe(true);
  });

  it('counts requests still in flight against the budget: an answer tells what the service counted before it', async () => {
    const time = fakeTime(WINDOW_END - 10_000);
    const pacer = rateLimitPacer(time.clock, { sleep: time.sleep });
    const first = await pacer.beforeSend();
    // Four more go before the first answer comes back.
    const inFlight = await Promise.all([1, 2, 3, 4].map(() => pacer.beforeSend()));
    // The service counted only the first when it answered: 5 of 10 left, less the 4 in flight.
    pacer.observe(first, headers(10, 5, WINDOW_END));
    const sentBeforeReset = await sendsBeforeReset(pacer, time, WINDOW_END);
    expect(inFlight).toEqual([2, 3, 4, 5]);
    expect(sentBeforeReset).toBe(1);
  });

  it('an answer that overtook an older request does not count that one as counted: the service may see it later', async () => {
    const time = fakeTime(WINDOW_END - 10_000);
    const pacer = rateLimitPacer(time.clock, { sleep: time.sleep });
    const older = await pacer.beforeSend();
    const newer = await pacer.beforeSend();
    // The newer request reached the service first (its own connection, its own timing): counted
    // alone, 2 of 3 left. The older one is counted after, and takes one of those 2.
    pacer.observe(newer, headers(3, 2, WINDOW_END));
    const sentBeforeReset = await sendsBeforeReset(pacer, time, WINDOW_END);
    pacer.observe(older, headers(3, 1, WINDOW_END));
    // 3 in the window: older, newer and one more; a fourth would have been answered 429.
    expect(sentBeforeReset).toBe(1);
  });

  it('a new window assumed at the reset leaves room for the requests still in flight', async () => {
    const time = fakeTime(WINDOW_END - 1000);
    const pacer = rateLimitPacer(time.clock, { sleep: time.sleep });
    const first = await pacer.beforeSend();
    pacer.observe(first, headers(4, 0, WINDOW_END));
    const unanswered = await pacer.beforeSend(); // waits for the reset, then goes: no answer yet
    expect(time.now()).toBeGreaterThanOrEqual(WINDOW_END + RESET_MARGIN_MS);
    const more: number[] = [];
    while (time.now() < WINDOW_END + RESET_MARGIN_MS + 60_000) {
      more.push(await pacer.beforeSend());
      if (more.length > 10) break;
    }
    // Limit 4 per window: the one unanswered and 3 more, then a wait for the (guessed) next reset,
    // after which at least one goes even though none was ever answered.
    expect(unanswered).toBe(2);
    expect(more).toEqual([3, 4, 5, 6]);
    expect(time.sleeps.at(-1)).toBeGreaterThan(50_000);
  });

  it('gives up waiting when the request is aborted', async () => {
    const time = fakeTime(WINDOW_END - 10_000);
    const pacer = rateLimitPacer(time.clock);
    pacer.observe(await pacer.beforeSend(), headers(1, 0, WINDOW_END));
    const controller = new AbortController();
    const waiting = pacer.beforeSend(controller.signal);
    controller.abort(new Error('stopping'));
    await expect(waiting).rejects.toThrow('stopping');
  });
});

describe('the token service client paces by the headers of every answer', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  it('sends no request the limit would refuse after the first window: it waits for the reset instead', async () => {
    const time = fakeTime(1_800_000_050_000);
    const LIMIT = 3;
    const seen: Array<{ at: number; status: number }> = [];
    let window = { start: Math.floor(time.now() / 60_000) * 60_000, count: 0 };
    server = createServer((req, res) => {
      const start = Math.floor(time.now() / 60_000) * 60_000;
      if (start !== window.start) window = { start, count: 0 };
      window.count += 1;
      const status = window.count > LIMIT ? 429 : 200;
      seen.push({ at: time.now(), status });
      const id = decodeURIComponent(req.url!.split('/').pop()!);
      res.writeHead(status, {
        'content-type': 'application/json',
        ...headers(LIMIT, Math.max(0, LIMIT - window.count), start + 60_000),
      });
      res.end(JSON.stringify(status === 200 ? { id, name: id, expiresAt: null } : { message: 'rate limited' }));
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const api = localServerClient(server, { clock: time.clock, pacer: rateLimitPacer(time.clock, { sleep: time.sleep }) });
    for (let i = 0; i < 8; i++) await api.retrieve(`t${i}`);
    expect(seen.filter((r) => r.status === 429)).toEqual([]);
    expect(seen).toHaveLength(8);
    // 3, 3 and 2 over three windows.
    const windows = seen.map((r) => Math.floor(r.at / 60_000));
    expect([...new Set(windows)].map((w) => windows.filter((x) => x === w).length)).toEqual([3, 3, 2]);
  });
});

import { setTimeout as sleep } from 'node:timers/promises';

import type { Clock } from '../clock.js';
import type { ResponseHeaders } from './retry-delay.js';

/**
 * A minute's window passed: wait this much longer than `X-RateLimit-Reset` says before spending the
 * next one, for the service's clock as we know it (from `Date` headers, to the second) and ours.
 */
export const RESET_MARGIN_MS = 1000;
/** The window the service's limit is documented for: `X-RateLimit-Limit` is requests per minute. */
const WINDOW_MS = 60_000;

export interface RateLimitPacer {
  /**
   * Before every try of a request: resolves when the service's budget has room for one more, at
   * once when it does. Resolves with the request's place in order, for `observe`.
   */
  beforeSend(signal?: AbortSignal, onWait?: (waitMs: number) => void): Promise<number>;
  /** Every answer's headers, with the place of the request it answers; `undefined` for a try that got none. */
  observe(sent: number, headers: ResponseHeaders | undefined): void;
}

function header(headers: ResponseHeaders | undefined, name: string): number {
  const value = headers?.[name];
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined || text.trim() === '' ? NaN : Number(text);
}

/**
 * Paces requests by the service's rate limit headers, shared by every request of one client (and
 * so by every lane of a run, and every check of the daemon). While `X-RateLimit-Remaining` leaves
 * room, requests go at once, as many as the concurrency allows: a generous limit costs nothing.
 * When the remaining budget of the window is spent, requests wait for `X-RateLimit-Reset` (plus a
 * margin), so that only the first window can see a 429, never the ones after it.
 *
 * The budget is counted down by every request sent, and set again by every answer: `Remaining` as
 * the service counted it when it answered, less every other request still unanswered, which it may
 * not have counted yet: those sent after that one, and those sent before it that it overtook (each
 * lane has its own connection, and the service counts a request when it gets to it). When a window passes before any answer says so, the new one is assumed to
 * hold `X-RateLimit-Limit`, less the requests still in flight. Without these headers nothing is
 * paced.
 */
export function rateLimitPacer(
  clock: Clock,
  options: { sleep?: (ms: number, signal?: AbortSignal) => Promise<void> } = {},
): RateLimitPacer {
  const wait = options.sleep ?? defaultSleep;
  let sent = 0;
  /**
   * Requests sent and not answered yet, by place, with when they were sent. One that never gets
   * an answer (its try given up without one) stops counting after a window.
   */
  const unanswered = new Map<number, number>();
  let limit: number | undefined;
  /**
   * The window as last known. `guessed`: a window passed before any answer told of the next one,
   * which is then assumed to last a minute from the end of the last (`after`).
   */
  let window: { resetMs: number; remaining: number; guessed: boolean; after: number } | undefined;
  /** Wakes the requests waiting for room when an answer says something new. */
  let changed: { promise: Promise<void>; resolve: () => void } | undefined;

  /** The requests still unanswered, but for those sent a window ago or more (their tries were given up). */
  function inFlight(now: number): number {
    for (const [place, sentAt] of unanswered) if (now - sentAt >= WINDOW_MS) unanswered.delete(place);
    return unanswered.size;
  }

  function wake(): void {
    changed?.resolve();
    changed = undefined;
  }

  return {
    async beforeSend(signal, onWait) {
      for (;;) {
        signal?.throwIfAborted();
        const now = clock.now().getTime();
        if (window && now >= window.resetMs + RESET_MARGIN_MS) {
          // The window passed. Requests still in flight may count in the new one.
          window =
            limit === undefined
              ? undefined
              : {
                  resetMs: window.resetMs + WINDOW_MS,
                  // At least one: requests that never get an answer must not stop every other.
                  remaining: Math.max(1, limit - inFlight(now)),
                  guessed: true,
                  after: window.resetMs,
                };
        }
        if (!window || window.remaining > 0) {
          if (window) window.remaining -= 1;
          sent += 1;
          unanswered.set(sent, now);
          return sent;
        }
        const waitMs = window.resetMs + RESET_MARGIN_MS - now;
        onWait?.(waitMs);
        changed ??= (() => {
          let resolve!: () => void;
          const promise = new Promise<void>((r) => (resolve = r));
          return { promise, resolve };
        })();
        await Promise.race([wait(Math.max(1, waitMs), signal), changed.promise]);
      }
    },

    observe(place, headers) {
      unanswered.delete(place);
      const remaining = header(headers, 'x-ratelimit-remaining');
      const reset = header(headers, 'x-ratelimit-reset');
      const max = header(headers, 'x-ratelimit-limit');
      if (Number.isFinite(max) && max > 0) limit = max;
      if (!Number.isFinite(remaining) || !Number.isFinite(reset) || reset <= 0) return;
      const resetMs = reset * 1000;
      const estimate = remaining - inFlight(clock.now().getTime());
      if (!window || (window.guessed ? resetMs > window.after : resetMs > window.resetMs)) {
        window = { resetMs, remaining: estimate, guessed: false, after: resetMs };
      } else if (resetMs === window.resetMs) {
        window.remaining = estimate;
      } else {
        return; // an answer from a window that has passed
      }
      wake();
    },
  };
}

/** Rejects with the signal's own reason, as `throwIfAborted` does, not Node's AbortError. */
function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return sleep(ms, undefined, { signal }).catch((error: unknown) => {
    signal?.throwIfAborted();
    throw error;
  });
}

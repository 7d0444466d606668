import type { TokenPolicy } from '../config/types.js';
import { sinksHoldCurrent, type TokenOutcome } from '../rotation/outcome.js';

/** The first retry after a check that left a name's sinks lacking, then doubling up to the last. */
const RETRY_DELAYS_MS = [5_000, 10_000, 20_000, 40_000, 60_000];

/**
 * What `/startupz` says: whether every token's sinks have held its current secret at least once
 * since this process started (delivered, redelivered, or found holding it). A pod's app starts
 * after its token, so a name not there yet is checked again within seconds, not at its schedule;
 * once there, it never counts against startup again (liveness and readiness speak for later).
 */
export function startupTracker(options: { names: () => string[]; retry: (token: TokenPolicy) => void }) {
  const done = new Set<string>();
  const attempts = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  return {
    observe(token: TokenPolicy, outcome: TokenOutcome): void {
      if (done.has(token.name)) return;
      if (sinksHoldCurrent(outcome)) {
        done.add(token.name);
        attempts.delete(token.name);
        return;
      }
      const attempt = attempts.get(token.name) ?? 0;
      attempts.set(token.name, attempt + 1);
      const timer = setTimeout(
        () => {
          timers.delete(timer);
          options.retry(token);
        },
        RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length - 1)],
      );
      timer.unref();
      timers.add(timer);
    },
    state(): { ready: boolean; reason: string } {
      const waiting = options.names().filter((name) => !done.has(name));
      if (waiting.length === 0) return { ready: true, reason: 'every token was delivered since start' };
      return { ready: false, reason: `not yet delivered since start: ${waiting.join(', ')}` };
    },
    stop(): void {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
}

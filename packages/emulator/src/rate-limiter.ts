import type { Clock } from './clock.js';

export interface RateLimitState {
  limited: boolean;
  headers: Record<string, string>;
}

/** A fixed one-minute window per caller, answered with the headers the real service sends. */
export class RateLimiter {
  readonly #windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly clock: Clock,
    public perMinute: number,
  ) {}

  hit(caller: string, scope: 'user' | 'organization' | 'anonymous'): RateLimitState {
    const now = this.clock.now().getTime();
    const windowStart = Math.floor(now / 60_000) * 60_000;
    let window = this.#windows.get(caller);
    if (!window || window.start !== windowStart) {
      window = { start: windowStart, count: 0 };
      this.#windows.set(caller, window);
    }
    window.count += 1;
    const limited = window.count > this.perMinute;
    return {
      limited,
      headers: {
        'x-ratelimit-scope': scope,
        'x-ratelimit-limit': String(this.perMinute),
        'x-ratelimit-remaining': String(Math.max(0, this.perMinute - window.count)),
        'x-ratelimit-reset': String(Math.ceil((windowStart + 60_000) / 1000)),
      },
    };
  }
}

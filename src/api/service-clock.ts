import type { Clock } from '../clock.js';

/** A skew past this is worth a warning: overlaps and revocations would be off by that much. */
export const SKEW_WARNING_MS = 60_000;

/**
 * A skew smaller than this is within what a `Date` header can measure (whole seconds, plus the
 * answer's time in transit): our own clock is as good, and is used as it is.
 */
export const SKEW_CORRECTION_MS = 2000;

/**
 * The service's clock minus ours, from the `Date` header of an answer received at `receivedAtMs` on
 * our clock. `Date` has whole seconds, truncated: the service's clock was somewhere in
 * [date, date + 1 s) when it answered, so the middle of that second is the best estimate.
 */
export function offsetFromDateHeader(dateHeader: string | undefined, receivedAtMs: number): number | undefined {
  if (!dateHeader) return undefined;
  const serviceMs = Date.parse(dateHeader);
  if (!Number.isFinite(serviceMs)) return undefined;
  return serviceMs + 500 - receivedAtMs;
}

export interface ServiceClock extends Clock {
  /** The service's clock minus ours, in ms, from its latest answer; undefined before any answer. */
  offsetMs(): number | undefined;
  /** Called with every answer's `Date` header. */
  observe(dateHeader: string | undefined): void;
}

/**
 * Our clock corrected to the service's: expiry times are the service's to enforce, so the times we
 * send (an overlap's end, a revocation's "now") and the times we compare with its answers must be
 * on its clock. A machine 2 h fast would otherwise keep a "revoked" token alive 2 more hours.
 */
export function serviceClock(local: Clock, onSkew?: (offsetMs: number) => void): ServiceClock {
  let offset: number | undefined;
  return {
    now: () => new Date(local.now().getTime() + (offset !== undefined && Math.abs(offset) >= SKEW_CORRECTION_MS ? offset : 0)),
    offsetMs: () => offset,
    observe(dateHeader) {
      const measured = offsetFromDateHeader(dateHeader, local.now().getTime());
      if (measured === undefined) return;
      offset = measured;
      onSkew?.(measured);
    },
  };
}

/** A newly measured offset differs enough from the recorded one to be worth a state write. */
export function skewWorthRecording(recorded: { offsetMs: number } | null, measuredMs: number | undefined): boolean {
  if (measuredMs === undefined) return false;
  if (recorded === null) return Math.abs(measuredMs) > SKEW_WARNING_MS;
  return Math.abs(recorded.offsetMs - measuredMs) > SKEW_WARNING_MS / 2;
}

/** "2h 3m ahead of" / "5m behind": for messages. */
export function describeSkew(offsetMs: number, format: (ms: number) => string): string {
  // Rounded to the finest unit the two-unit format shows (minutes from an hour up, else seconds):
  // the measurement is off by up to a second plus the answer's transit, and a format that truncates
  // would show a 2 h skew measured as 1h 59m 59.4s as "1h 59m".
  const unit = Math.abs(offsetMs) >= 3600_000 - 30_000 ? 60_000 : 1000;
  return `${format(Math.round(Math.abs(offsetMs) / unit) * unit)} ${offsetMs >= 0 ? 'ahead of' : 'behind'}`;
}

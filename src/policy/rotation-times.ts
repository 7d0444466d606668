import type { RotationTimes } from '../api/service-token.js';

/** The service may keep whole seconds only; differences smaller than this may not survive. */
const DETECTABLE_MS = 1000;

/**
 * The two times sent with regenerate. The old token keeps working for the overlap, but never longer
 * than it would have anyway: a rotation must not extend a credential's life, least of all a leaked
 * one's. When the overlap is cut short it ends at least a whole second before the current expiry,
 * so that after a lost answer the old token's expiry shows whether the service acted.
 */
export function rotationTimes(input: {
  currentExpiresAt: Date | null;
  overlapMs: number;
  lifetimeMs: number | null;
  now: Date;
}): RotationTimes {
  const { currentExpiresAt, overlapMs, lifetimeMs, now } = input;
  let existing = now.getTime() + overlapMs;
  if (currentExpiresAt) {
    const latest = Math.floor(currentExpiresAt.getTime() / DETECTABLE_MS) * DETECTABLE_MS - DETECTABLE_MS;
    existing = Math.min(existing, latest);
  }
  const newTokenExpiresAt = lifetimeMs === null ? null : new Date(now.getTime() + lifetimeMs);
  return { existingTokenExpiresAt: new Date(existing), newTokenExpiresAt };
}

/**
 * Whether the service applied a regenerate that carried `sent`, judged from the old token's expiry
 * now (undefined: the old token is gone). Anything but its untouched previous expiry means it did.
 */
export function regenerateWasApplied(input: { before: Date | null; sent: Date; now: Date | null | undefined }): boolean {
  if (input.now === undefined) return true;
  const near = (a: Date | null, b: Date | null) =>
    a === null || b === null ? a === b : Math.abs(a.getTime() - b.getTime()) < DETECTABLE_MS;
  if (near(input.now, input.sent)) return true;
  return !near(input.now, input.before);
}

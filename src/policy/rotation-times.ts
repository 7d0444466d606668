export interface RotationTimes {
  /** When the replaced token stops working. */
  existingTokenExpiresAt: Date;
  /** When the new token stops working; null: it never expires. */
  newTokenExpiresAt: Date | null;
}

/**
 * The two times sent with regenerate. The old token keeps working for the overlap, but never longer
 * than it would have anyway: a rotation must not extend a credential's life, least of all a leaked
 * one's. For a token that has already expired this is its own past expiry.
 */
export function rotationTimes(input: {
  currentExpiresAt: Date | null;
  overlapMs: number;
  lifetimeMs: number | null;
  now: Date;
}): RotationTimes {
  const { currentExpiresAt, overlapMs, lifetimeMs, now } = input;
  const overlapEnd = new Date(now.getTime() + overlapMs);
  const existingTokenExpiresAt = currentExpiresAt && currentExpiresAt < overlapEnd ? currentExpiresAt : overlapEnd;
  const newTokenExpiresAt = lifetimeMs === null ? null : new Date(now.getTime() + lifetimeMs);
  return { existingTokenExpiresAt, newTokenExpiresAt };
}

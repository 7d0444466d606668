/** `renewBefore` as a fixed duration before expiry, or as a share of the token's lifetime. */
export type RenewBefore = { kind: 'duration'; ms: number } | { kind: 'share'; percent: number };

/** How a token is rotated: when it is due, the overlap, the new lifetime, and what drift does. */
export interface RotationSettings {
  renewBefore: RenewBefore;
  /** How long the replaced token keeps working after a rotation. */
  overlapMs: number;
  /** The new token's lifetime; null means the new token never expires. */
  lifetimeMs: number | null;
  /**
   * Also rotate when the token is older than this. undefined: not set, so only a token that never
   * expires gets one (90 days, see NEVER_EXPIRES_MAX_AGE_MS); null: `maxAge: never`, off for all.
   */
  maxAgeMs: number | null | undefined;
  /** A sink that lacks the current secret: deliver the held secret again, rotate to repair it, or only report it. */
  onDrift: 'redeliver' | 'rotate' | 'report';
}

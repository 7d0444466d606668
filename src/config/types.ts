import type { ConfigIssue } from '../errors.js';
import type { NotificationConfig } from '../notify/notification-config.js';
import type { ReloadConfig } from '../reload/registry.js';
import type { SinkConfig } from '../sinks/registry.js';
import type { VerifyProbe } from '../verify/verify-config.js';

/** `renewBefore` as a fixed duration before expiry, or as a share of the token's lifetime. */
export type RenewBefore = { kind: 'duration'; ms: number } | { kind: 'share'; percent: number };

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

/** When the daemon checks a token. */
export interface CheckSchedule {
  expression: string;
  timezone: string | undefined;
  jitterMs: number;
}

export interface TokenPolicy {
  name: string;
  /** The token's id when first adopted; the current id lives in the state store. */
  id: string;
  settings: RotationSettings;
  schedule: CheckSchedule;
  sinks: SinkConfig[];
  /** Run after each committed rotation; empty for none. */
  reload: ReloadConfig[];
  /** Where the list was written (`defaults.reload` or `tokens[2].reload`), for messages. */
  reloadAt: string;
  /** A probe of the new token itself before commit (`verify:`); the built-in checks run without it. */
  verify?: VerifyProbe;
}

export interface Policy {
  /** Absolute path of the policy file. */
  file: string;
  tokens: TokenPolicy[];
  notifications: NotificationConfig[];
  /** What is valid but likely not meant (a policy with no tokens): every command logs them. */
  warnings: ConfigIssue[];
}

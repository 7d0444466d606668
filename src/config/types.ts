import type { NotificationConfig } from '../notify/notification-config.js';
import type { ReloadConfig } from '../reload/registry.js';
import type { SinkConfig } from '../sinks/registry.js';

/** `renewBefore` as a fixed duration before expiry, or as a share of the token's lifetime. */
export type RenewBefore = { kind: 'duration'; ms: number } | { kind: 'share'; percent: number };

export interface RotationSettings {
  renewBefore: RenewBefore;
  /** How long the replaced token keeps working after a rotation. */
  overlapMs: number;
  /** The new token's lifetime; null means the new token never expires. */
  lifetimeMs: number | null;
  /** Also rotate when the last rotation is older than this; null turns the check off. */
  maxAgeMs: number | null;
  /** A sink that lacks the current secret: rotate to repair it, or only report it. */
  onDrift: 'rotate' | 'report';
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
}

export interface Policy {
  /** Absolute path of the policy file. */
  file: string;
  tokens: TokenPolicy[];
  notifications: NotificationConfig[];
}

import type { ConfigIssue } from '../errors.js';
import type { NotificationConfig } from '../notify/notification-config.js';
import type { RotationSettings } from '../policy/rotation-settings.js';
import type { ReloadConfig } from '../reload/registry.js';
import type { SinkConfig } from '../sinks/registry.js';
import type { VerifyProbe } from '../verify/verify-config.js';

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

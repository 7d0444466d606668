import type { ConfigIssue } from '../errors.js';
import type { NotificationConfig } from '../notify/notification-config.js';
import type { ReloadConfig } from '../reload/registry.js';
import type { TokenSet, TokenSpec } from '../rotation/token-spec.js';

/** When the daemon checks a token. */
export interface CheckSchedule {
  expression: string;
  timezone: string | undefined;
  jitterMs: number;
}

/** A token as the policy gives it: what rotation reads, and the schedule and reloads. */
export interface TokenPolicy extends TokenSpec {
  schedule: CheckSchedule;
  /** Run after each committed rotation; empty for none. */
  reload: ReloadConfig[];
  /** Where the list was written (`defaults.reload` or `tokens[2].reload`), for messages. */
  reloadAt: string;
}

export interface Policy extends TokenSet {
  /** Absolute path of the policy file. */
  file: string;
  tokens: TokenPolicy[];
  notifications: NotificationConfig[];
  /** What is valid but likely not meant (a policy with no tokens): every command logs them. */
  warnings: ConfigIssue[];
}

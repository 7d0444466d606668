import type { Clock } from '../clock.js';
import type { Env } from '../common/env-variables.js';
import type { ConfigIssue } from '../errors.js';
import type { Logger } from '../log/logger.js';
import type { Journal } from './journal.js';
import type { NameLocks } from './name-locks.js';
import type { StateStore } from './state-store.js';

/**
 * Where token-rotator keeps what must outlive a run: each name's record (current id, lineage), the
 * journal of unfinished rotations, and the per-name locks. One backend serves all three, so that a
 * record, its journal entry and its lock always live side by side.
 */
export interface StateBackend {
  /** Where the state lives, for messages: `file /var/lib/token-rotator`. */
  describe(): string;
  state: StateStore;
  journal: Journal;
  locks: NameLocks;
}

/** What a backend may use: nothing of the policy, its settings read from the environment itself. */
export interface StateBackendContext {
  /** The state folder, for backends that keep anything on this disk. */
  dir: string;
  env: Env;
  /** This machine's clock: lock times are compared on it. */
  clock: Clock;
  logger: Logger;
}

/** What a backend's settings are checked against, before any network call. */
export interface StateBackendSettings {
  dir: string;
  env: Env;
  /** Whether ROTATOR_STATE_KEY is set: a backend whose state leaves this machine may require it. */
  hasStateKey: boolean;
  /**
   * false: the command stages and unseals no secret (`status`, `state forget` only read the state's
   * plain fields or remove them), so no key is required for it. Absent: it may.
   */
  sealsSecrets?: boolean;
}

/** A kind of backend, in the registry: opening it loads its code. */
export interface StateBackendType {
  /** One line for `--help` and errors. */
  summary: string;
  /** Problems with this backend's own settings, each with its path (`env.ROTATOR_STATE_NAMESPACE`). */
  check?(settings: StateBackendSettings): ConfigIssue[];
  /** Where the state will live, without the network: `validate` shows it. */
  where(settings: StateBackendSettings): string;
  open(context: StateBackendContext): Promise<StateBackend>;
}

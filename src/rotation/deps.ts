import type { KeyObject } from 'node:crypto';

import type { TokenServiceClient } from '../api/token-service-client.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../log/logger.js';
import type { SinkConfig } from '../sinks/registry.js';
import type { SinkSet } from '../sinks/sink-set.js';
import type { Journal } from '../state/journal.js';
import type { NameLocks } from '../state/name-locks.js';
import type { StateKeys } from '../state/secret-box.js';
import type { StateStore } from '../state/state-store.js';

/** The boundaries between protocol steps, where tests stop the process to prove crash safety. */
/**
 * The step boundaries a crash is simulated at. `written`: a sink holds the secret, but the journal
 * does not say so yet, so the next run writes it again (and the sink must not make a second version).
 */
export type Failpoint = 'intent' | 'regenerated' | 'staged' | 'written' | 'delivered' | 'verifying' | 'committed';

/**
 * What an in-process failpoint throws to stand for the process dying at that step: `rotateToken`
 * lets it through untouched (no failure recorded, as a dead process records none), so a test can
 * resume with fresh deps over the same state, as the next run would.
 */
export class SimulatedCrash extends Error {
  constructor(readonly step: Failpoint) {
    super(`simulated crash at ${step}`);
    this.name = 'SimulatedCrash';
  }
}

/** The side effects rotation needs, built once by the CLI. */
export interface RotationDeps {
  api: TokenServiceClient;
  state: StateStore;
  journal: Journal;
  locks: NameLocks;
  /** The service's clock (ours corrected by the skew measured from its answers): every rotation time. */
  clock: Clock;
  /** The service's clock minus ours, when measured: recorded in state for `status`. */
  clockOffsetMs?: () => number | undefined;
  logger: Logger;
  /** The sinks of this run: each type's client opened on first use. */
  sinks: SinkSet<SinkConfig>;
  /** Seals staged and current secrets (else they are plain in state) and keys the sinks' fingerprints. */
  stateKey: KeyObject | undefined;
  /** Keys that only open what they sealed (`ROTATOR_STATE_KEY_PREVIOUS`); it is sealed again with `stateKey` at the next write. */
  previousStateKeys?: readonly KeyObject[];
  failpoint?: (step: Failpoint) => void;
}

/** The run's key ring: the current key seals, every key opens. */
export const stateKeysOf = (deps: Pick<RotationDeps, 'stateKey' | 'previousStateKeys'>): StateKeys => ({
  current: deps.stateKey,
  previous: deps.previousStateKeys ?? [],
});

import type { KeyObject } from 'node:crypto';

import type { TokenServiceClient } from '../api/token-service-client.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../log/logger.js';
import type { SinkConfig } from '../sinks/registry.js';
import type { Sink } from '../sinks/sink.js';
import type { Journal } from '../state/journal.js';
import type { NameLocks } from '../state/name-lock.js';
import type { StateStore } from '../state/state-store.js';

/** The boundaries between protocol steps, where tests stop the process to prove crash safety. */
export type Failpoint = 'intent' | 'regenerated' | 'staged' | 'delivered' | 'committed';

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
  createSink: (config: SinkConfig) => Sink;
  sinkTarget: (config: SinkConfig) => string;
  /** Seals staged secrets; undefined keeps them plain in 0600 files. */
  stateKey: KeyObject | undefined;
  failpoint?: (step: Failpoint) => void;
}

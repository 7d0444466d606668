import type { TokenServiceClient } from '../api/token-service-client.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../log/logger.js';
import type { SinkConfig } from '../sinks/registry.js';
import type { Sink } from '../sinks/sink.js';
import type { StateStore } from '../state/state-store.js';

/** The side effects rotation needs, built once by the CLI. */
export interface RotationDeps {
  api: TokenServiceClient;
  state: StateStore;
  clock: Clock;
  logger: Logger;
  createSink: (config: SinkConfig) => Sink;
}

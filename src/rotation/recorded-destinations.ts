import { claimed } from '../sinks/ownership.js';
import type { SinkConfig } from '../sinks/registry.js';
import type { StateRecord } from '../state/state-record.js';
import type { RotationDeps } from './deps.js';

/**
 * A destination this name has delivered to (or adopted) before is ours, whatever its marker says
 * now: the state's record of it counts as much as the marker. Reads, preflights and writes of such
 * a sink go through the claimed config.
 */
export function asRecorded(config: SinkConfig, deps: Pick<RotationDeps, 'sinks'>, record: StateRecord | undefined): SinkConfig {
  return record?.sinks?.[deps.sinks.target(config)] !== undefined ? claimed(config) : config;
}

import { type FileSinkConfig, fileSinkFactory } from './file/file-sink.js';
import type { SinkFactory } from './sink.js';

/** Every sink type, checked by the compiler: a new type is one entry here and one folder. */
export const sinkFactories = {
  file: fileSinkFactory,
} satisfies { [K in SinkConfig['type']]: SinkFactory<Extract<SinkConfig, { type: K }>> };

export type SinkConfig = FileSinkConfig;
export type SinkType = SinkConfig['type'];

export function isSinkType(type: unknown): type is SinkType {
  return typeof type === 'string' && Object.hasOwn(sinkFactories, type);
}

export function createSink(config: SinkConfig) {
  return sinkFactories[config.type].create(config);
}

/** The identity of a sink's destination: what the journal marks as delivered. */
export function sinkTarget(config: SinkConfig): string {
  return sinkFactories[config.type].target(config);
}

/** The real local location of a sink's destination; undefined for sink types that write elsewhere. */
export function sinkLocalPath(config: SinkConfig): string | undefined {
  return sinkFactories[config.type].localPath?.(config);
}

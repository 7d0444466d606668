import type { Secret } from '../../src/secret.js';
import { fileSinkType } from '../../src/sinks/file/file-sink.js';
import type { FileSinkConfig } from '../../src/sinks/file/file-sink-config.js';
import type { TokenMeta } from '../../src/sinks/sink.js';
import { captureLog } from './rotator-client.js';

/** One file sink config bound to a client of the real type, as a run would open it. */
export function boundFileSink(config: FileSinkConfig) {
  const client = fileSinkType.open({ logger: captureLog().logger, env: {}, reference: () => undefined });
  return {
    write: async (secret: Secret, meta: TokenMeta, options: { signal?: AbortSignal } = {}) =>
      (await client).write(config, secret, meta, options),
    read: async (options: { signal?: AbortSignal } = {}) => (await client).read(config, options),
  };
}

/** Metadata for a test write: the token's, and the rotation's. */
export function testMeta(over: Partial<TokenMeta> = {}): TokenMeta {
  return { name: 'ingest', id: 'tok-1', expiresAt: null, rotationId: 'rotation-1', rotatedAt: new Date('2026-11-22T12:00:00Z'), ...over };
}

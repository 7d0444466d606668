import type { Secret } from '../secret.js';
import type { SinkClient, SinkContent, SinkOpenContext, SinkType, TokenMeta, WriteResult } from './sink.js';

/**
 * The sinks of one run: each type's client opened on first use (its module loaded then, not
 * before), shared by every token, closed once at the end. What rotation talks to.
 */
export interface SinkSet<C extends { type: string }> {
  target(config: C): string;
  describe(config: C): string;
  /** Whether what the destination holds can be read back (see SinkType.readable). */
  readable(config: C): boolean;
  write(config: C, secret: Secret, meta: TokenMeta, options: { signal?: AbortSignal }): Promise<WriteResult>;
  read(config: C, options: { signal?: AbortSignal }): Promise<SinkContent | undefined>;
  /** `checked` when the sink type can check without writing and found nothing wrong; throws what it found. */
  preflight(config: C, options: { signal?: AbortSignal }): Promise<'checked' | 'not supported'>;
  close(): Promise<void>;
}

export function openSinkSet<C extends { type: string }>(
  types: Readonly<Record<string, SinkType<C>>>,
  context: SinkOpenContext,
): SinkSet<C> {
  const clients = new Map<string, Promise<SinkClient<C>>>();
  const typeOf = (config: C): SinkType<C> => {
    const type = types[config.type];
    if (!type) throw new Error(`no sink type ${JSON.stringify(config.type)}`);
    return type;
  };
  const client = (config: C): Promise<SinkClient<C>> => {
    let opened = clients.get(config.type);
    if (!opened) {
      opened = typeOf(config).open(context);
      // A failure to open (credentials, a module) is tried again by the next token, not cached.
      opened.catch(() => clients.delete(config.type));
      clients.set(config.type, opened);
    }
    return opened;
  };
  return {
    target: (config) => typeOf(config).target(config),
    describe: (config) => typeOf(config).describe(config),
    readable: (config) => typeOf(config).readable?.(config) ?? true,
    write: async (config, secret, meta, options) => (await client(config)).write(config, secret, meta, options),
    read: async (config, options) => (await client(config)).read(config, options),
    async preflight(config, options) {
      const opened = await client(config);
      if (!opened.preflight) return 'not supported';
      await opened.preflight(config, options);
      return 'checked';
    },
    async close() {
      const opened = await Promise.allSettled([...clients.values()]);
      clients.clear();
      await Promise.allSettled(opened.flatMap((o) => (o.status === 'fulfilled' ? [o.value.close()] : [])));
    },
  };
}

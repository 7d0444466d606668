import { SinkError } from '../errors.js';
import { scrubSecrets, type Secret } from '../secret.js';
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
  /**
   * `checked` when the sink type can check without writing and found nothing wrong; throws what it
   * found. A pass is kept for a minute per destination.
   */
  preflight(config: C, options: { signal?: AbortSignal }): Promise<'checked' | 'not supported'>;
  /** The destination as the service names it (see SinkClient.identify); undefined when it cannot say. */
  identify(config: C, options: { signal?: AbortSignal }): Promise<string | undefined>;
  close(): Promise<void>;
}

/**
 * How long a passed preflight speaks for its destination: one per destination for a run of `once`
 * (a policy may name it from many tokens), and fresh again for the daemon's later checks, where a
 * namespace or a permission may have gone since.
 */
const PREFLIGHT_KEPT_MS = 60_000;

export function openSinkSet<C extends { type: string }>(
  types: Readonly<Record<string, SinkType<C>>>,
  context: SinkOpenContext,
): SinkSet<C> {
  const clients = new Map<string, Promise<SinkClient<C>>>();
  const preflights = new Map<string, { at: number; result: Promise<'checked' | 'not supported'> }>();
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
  /**
   * Every error out of a sink names the sink, once: the sink types' own errors do ("cannot write file
   * x: ..."), anything else is named here. So whatever shows one (a log line, a table cell, a drift
   * finding) shows it as it is, and never puts the sink's name before it again.
   */
  const named = async <T>(config: C, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      const e = error as Error | undefined;
      if (e?.name === 'AbortError' || e?.name === 'TimeoutError') throw error;
      const description = typeOf(config).describe(config);
      // A peer's or a program's text may echo a secret that does not look like one: scrubbed of every
      // known value, as the API client's errors are, before anything shows or stores it.
      const said = String(e?.message ?? error);
      const message = scrubSecrets(said);
      if (message === said && message.includes(description)) throw error;
      throw new SinkError(message.includes(description) ? message : `${description}: ${message}`, { cause: error });
    }
  };
  return {
    target: (config) => typeOf(config).target(config),
    describe: (config) => typeOf(config).describe(config),
    readable: (config) => typeOf(config).readable?.(config) ?? true,
    write: (config, secret, meta, options) => named(config, async () => (await client(config)).write(config, secret, meta, options)),
    read: (config, options) => named(config, async () => (await client(config)).read(config, options)),
    preflight(config, options) {
      const target = typeOf(config).target(config);
      const kept = preflights.get(target);
      if (kept && performance.now() - kept.at < PREFLIGHT_KEPT_MS) return kept.result;
      const result = named(config, async () => {
        const opened = await client(config);
        if (!opened.preflight) return 'not supported' as const;
        await opened.preflight(config, options);
        return 'checked' as const;
      });
      // Only a pass is kept: what failed is asked again, so a fix takes effect at the next check.
      preflights.set(target, { at: performance.now(), result });
      result.catch(() => preflights.delete(target));
      return result;
    },
    identify: (config, options) => named(config, async () => (await client(config)).identify?.(config, options)),
    async close() {
      const opened = await Promise.allSettled([...clients.values()]);
      clients.clear();
      await Promise.allSettled(opened.flatMap((o) => (o.status === 'fulfilled' ? [o.value.close()] : [])));
    },
  };
}

import { SinkError } from '../../src/errors.js';
import type { Logger } from '../../src/log/logger.js';
import { Secret } from '../../src/secret.js';
import type { SinkConfig } from '../../src/sinks/registry.js';
import type { SinkClient, SinkOpenContext, SinkType, StoredTokenMeta, WriteResult } from '../../src/sinks/sink.js';
import { openSinkSet, type SinkSet } from '../../src/sinks/sink-set.js';

/** A sink that writes into a MemorySinkStore, under `key`. */
export interface MemorySinkConfig {
  type: 'memory';
  key: string;
}

/**
 * A memory sink config where the product expects a `SinkConfig` (a union of the product's own sink
 * types, which a test type is not part of). The one place that cast is made.
 */
export function memorySink(key: string): SinkConfig {
  const config: MemorySinkConfig = { type: 'memory', key };
  return config as unknown as SinkConfig;
}

/** What a destination holds: the secret, and the metadata written beside it. */
export interface MemorySinkContent {
  secret: string;
  meta: StoredTokenMeta;
}

/**
 * The destinations themselves, shared by every client opened on them: like a real secret store,
 * they outlive the process that wrote them. Writes can be made to fail, key by key.
 */
export class MemorySinkStore {
  /**
   * `keepsMeta: false` plays a destination that holds the secret alone (a raw file): nothing
   * about the token is read back from it.
   */
  constructor(readonly options: { keepsMeta?: boolean } = {}) {}

  readonly #contents = new Map<string, MemorySinkContent>();
  readonly #failing = new Map<string, string>();
  readonly #unreadable = new Map<string, string>();
  readonly #corrupting = new Set<string>();
  readonly #during = new Map<string, () => void | Promise<void>>();
  /** Every write that reached a destination, with its result (failed writes included). */
  readonly writes: Array<{ key: string; result: WriteResult | 'failed' }> = [];

  /** The secret a destination holds, or undefined. */
  secret(key: string): string | undefined {
    return this.#contents.get(key)?.secret;
  }

  content(key: string): MemorySinkContent | undefined {
    return this.#contents.get(key);
  }

  /** Puts content there as something else would (an operator, an earlier tool): no write is counted. */
  put(key: string, secret: string, meta: StoredTokenMeta = {}): void {
    this.#contents.set(key, { secret, meta });
  }

  /** The destination loses what it held (deleted by hand, a store wiped). */
  lose(key: string): void {
    this.#contents.delete(key);
  }

  /** Writes to `key` fail with a SinkError until `heal`. */
  failWrites(key: string, why = 'permission denied (injected)'): void {
    this.#failing.set(key, why);
  }

  /** Reads of `key` fail with a SinkError until `heal`. */
  failReads(key: string, why = 'unreachable (injected)'): void {
    this.#unreadable.set(key, why);
  }

  /**
   * Runs `hook` once, during the next write to `key`, before it lands: where a test plays what
   * happens while the writer is stopped or slow.
   */
  duringWrite(key: string, hook: () => void | Promise<void>): void {
    this.#during.set(key, hook);
  }

  /** Writes to `key` store something else than they are given (a sink that mangles), until `heal`. */
  corruptWrites(key: string): void {
    this.#corrupting.add(key);
  }

  heal(key: string): void {
    this.#failing.delete(key);
    this.#unreadable.delete(key);
    this.#corrupting.delete(key);
  }

  /** Writes that reached `key` (any result). */
  writesTo(key: string): Array<WriteResult | 'failed'> {
    return this.writes.filter((w) => w.key === key).map((w) => w.result);
  }

  /** A client: what a sink type opens for one run. */
  client(): SinkClient<MemorySinkConfig> {
    return {
      write: async (config, secret, meta, { signal }) => {
        signal?.throwIfAborted();
        const hook = this.#during.get(config.key);
        this.#during.delete(config.key);
        await hook?.();
        const why = this.#failing.get(config.key);
        if (why) {
          this.writes.push({ key: config.key, result: 'failed' });
          throw new SinkError(`cannot write memory ${config.key}: ${why}`);
        }
        const stored: StoredTokenMeta = {
          name: meta.name,
          id: meta.id,
          expiresAt: meta.expiresAt ? meta.expiresAt.toISOString() : null,
          rotationId: meta.rotationId,
          rotatedAt: meta.rotatedAt.toISOString(),
        };
        const before = this.#contents.get(config.key);
        const result: WriteResult = !before
          ? 'created'
          : before.secret === secret.reveal() && JSON.stringify(before.meta) === JSON.stringify(stored)
            ? 'unchanged'
            : 'updated';
        const value = this.#corrupting.has(config.key) ? `${secret.reveal()}\n` : secret.reveal();
        this.#contents.set(config.key, { secret: value, meta: stored });
        this.writes.push({ key: config.key, result });
        return result;
      },
      read: async (config, { signal }) => {
        signal?.throwIfAborted();
        const why = this.#unreadable.get(config.key);
        if (why) throw new SinkError(`cannot read memory ${config.key}: ${why}`);
        const content = this.#contents.get(config.key);
        if (!content) return undefined;
        return this.options.keepsMeta === false
          ? { secret: new Secret(content.secret) }
          : { secret: new Secret(content.secret), meta: { ...content.meta } };
      },
      close: async () => undefined,
    };
  }

  /** The sink type, as a registry would list it. */
  type(): SinkType<MemorySinkConfig> {
    return {
      type: 'memory',
      parse: (raw) => {
        const { type, key } = (raw ?? {}) as Partial<MemorySinkConfig>;
        if (type === 'memory' && typeof key === 'string' && key.length > 0) return { ok: true, config: { type, key } };
        return { ok: false, issues: [{ path: 'key', message: 'required: a non-empty string' }] };
      },
      target: (config) => `memory:${config.key}`,
      describe: (config) => `memory ${config.key}`,
      open: async () => this.client(),
    };
  }

  /** The sinks of one run (one process), through the product's SinkSet, as `RotationDeps.sinks` takes them. */
  open(logger: Logger): SinkSet<SinkConfig> {
    // The memory sink takes no credentials: `reference` never finds one.
    const context = { logger, env: {}, reference: () => undefined } as SinkOpenContext;
    const sinks = openSinkSet<MemorySinkConfig>({ memory: this.type() }, context);
    return sinks as unknown as SinkSet<SinkConfig>;
  }
}

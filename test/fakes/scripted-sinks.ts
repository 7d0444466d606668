import { Secret } from '../../src/secret.js';
import type { SinkConfig } from '../../src/sinks/registry.js';
import type { SinkContent, StoredTokenMeta } from '../../src/sinks/sink.js';
import type { SinkSet } from '../../src/sinks/sink-set.js';

/**
 * A sink config for `scriptedSinks`. `marked`: a sink type that marks what it owns (a Kubernetes
 * Secret's label): it has an `adopt` option, and reads another writer's content as `unowned` unless
 * `adopt: true`. `writeOnly`: what it holds cannot be read back (a program).
 */
export interface ScriptedSinkConfig {
  type: 'scripted';
  key: string;
  adopt?: boolean;
  writeOnly?: boolean;
}

export function scriptedSink(key: string, options: { marked?: boolean; adopt?: boolean; writeOnly?: boolean } = {}): SinkConfig {
  const config: ScriptedSinkConfig = {
    type: 'scripted',
    key,
    ...(options.marked || options.adopt !== undefined ? { adopt: options.adopt ?? false } : {}),
    ...(options.writeOnly ? { writeOnly: true } : {}),
  };
  return config as unknown as SinkConfig;
}

/** What a destination holds: a secret (or content with none), metadata, and whose marker it bears. */
export interface ScriptedContent {
  secret?: string;
  meta?: StoredTokenMeta;
  /** Whether our ownership marker is on it (marked sinks only). */
  ours?: boolean;
}

/**
 * Destinations a test sets up one by one, read through the SinkSet rotation uses: only reading is
 * scripted (what a check does); writing is refused, so a test that reaches it fails loudly.
 */
export class ScriptedSinks {
  readonly #contents = new Map<string, ScriptedContent>();
  readonly #errors = new Map<string, Error>();
  /** Every read, with the config it was given and whether it carried an abort signal. */
  readonly reads: Array<{ key: string; adopt: boolean | undefined; signal: boolean }> = [];

  put(key: string, content: ScriptedContent): this {
    this.#contents.set(key, content);
    return this;
  }

  /** The next reads of `key` throw `error`. */
  failReads(key: string, error: Error): this {
    this.#errors.set(key, error);
    return this;
  }

  /** Reads after the first of `key` find `content` instead (what a second read of a reclaimed sink finds). */
  thenPut(key: string, content: ScriptedContent | undefined): this {
    this.#then.set(key, content);
    return this;
  }

  readonly #then = new Map<string, ScriptedContent | undefined>();

  set(): SinkSet<SinkConfig> {
    const of = (config: SinkConfig) => config as unknown as ScriptedSinkConfig;
    const refused = () => Promise.reject(new Error('scripted sinks only read'));
    return {
      target: (config) => `scripted:${of(config).key}`,
      describe: (config) => `scripted ${of(config).key}`,
      readable: (config) => of(config).writeOnly !== true,
      read: async (config, options): Promise<SinkContent | undefined> => {
        const { key, adopt } = of(config);
        const first = !this.reads.some((r) => r.key === key);
        this.reads.push({ key, adopt, signal: options.signal !== undefined });
        options.signal?.throwIfAborted();
        if (this.#errors.has(key)) throw this.#errors.get(key);
        const content = !first && this.#then.has(key) ? this.#then.get(key) : this.#contents.get(key);
        if (!content) return undefined;
        const secret = content.secret === undefined ? undefined : new Secret(content.secret);
        const meta = content.meta ? { ...content.meta } : undefined;
        if ('adopt' in of(config) && adopt !== true && content.ours === false) {
          return { secret, meta, unowned: `it has no marker of token-rotator; set adopt: true on the sink to take it over` };
        }
        return { secret, meta };
      },
      write: refused,
      preflight: refused,
      identify: refused,
      close: async () => undefined,
    };
  }
}

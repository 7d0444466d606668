import type { Env } from '../common/env-variables.js';
import type { Reference } from '../common/reference.js';
import type { ConfigIssue } from '../errors.js';
import type { WriteResult } from '../fs/atomic-write.js';
import type { Logger } from '../log/logger.js';
import type { Secret } from '../secret.js';

export type { WriteResult };

/**
 * What a sink may know about the token besides its secret. Sinks that can hold metadata store it
 * beside the secret (never the secret in it), so that drift repair and a lost state can be
 * recovered from what the sinks hold.
 */
export interface TokenMeta {
  name: string;
  id: string;
  expiresAt: Date | null;
  /** The rotation that produced this secret: the same for every sink it went to. */
  rotationId: string;
  rotatedAt: Date;
}

/** What a sink says of the token it holds, when it can carry metadata; any part may be missing. */
export interface StoredTokenMeta {
  /** The token name the metadata was written for: a destination naming another token is not this one's. */
  name?: string;
  id?: string;
  expiresAt?: string | null;
  rotationId?: string;
  rotatedAt?: string;
}

/**
 * What a sink holds, read back. `secret` is undefined when there is content but no secret in it
 * that this sink's format can find (a file in another format, a Secret without the key).
 */
export interface SinkContent {
  secret: Secret | undefined;
  meta?: StoredTokenMeta;
  /**
   * Set by a sink that marks what it owns, when the destination is another writer's and the config
   * does not say to adopt it: why a write would be refused. The rotation then reports it rather than
   * taking its content for the current secret, or rotating for a write that cannot happen.
   */
  unowned?: string;
}

export interface SinkParseContext {
  /** Relative paths in a sink's configuration are relative to the policy file's folder. */
  policyDir: string;
  /** The run's environment: where a sink type finds its defaults (a namespace from the kubeconfig). */
  env?: Env;
}

export type SinkParseResult<C> = { ok: true; config: C } | { ok: false; issues: ConfigIssue[] };

/** What opening a sink type's client may use: its credentials come by reference, from the environment. */
export interface SinkOpenContext {
  logger: Logger;
  env: Env;
  /** The value of a referenced variable (`NAME`, or the file `NAME_FILE` names); undefined when not set. */
  reference(variable: string): Secret | undefined;
}

/** Two spellings found to be one destination, or perhaps one, and why (`prod/x in eu-west-1`). */
export interface Sameness {
  verdict: 'same' | 'unknown';
  why: string;
}

/**
 * A sink type: cheap, loaded with the policy. It turns raw policy configuration into a typed,
 * normalised config (every problem with its path relative to the sink), says where a config writes,
 * and opens a client (its own module, imported only then) when a run needs one.
 */
export interface SinkType<C extends { type: string }> {
  type: C['type'];
  parse(raw: unknown, context: SinkParseContext): SinkParseResult<C>;
  /**
   * A stable identity of the destination, the same for every spelling of it the policy and the
   * environment can tell apart (an AWS secret by name or by ARN, a Vault namespace with or without
   * slashes): duplicates are refused by it, and the journal and the state record mark deliveries by
   * it. It starts with the type and a colon.
   */
  target(config: C): string;
  /**
   * A target as an earlier version wrote it into a journal entry or a state record, in today's form;
   * the same string when it already is. Only what the stored string says is used, so entries and
   * records from before a target's form changed still name their sinks. Absent: targets never changed.
   */
  upgradeTarget?(stored: string): string;
  /**
   * For a type whose spellings of one destination `target` cannot settle alone (an AWS secret by
   * name, whose account only the credentials say, and by ARN): the keys two spellings of one
   * destination always share, and whether two configs sharing one, with different targets, are one
   * destination (`same`: refused as duplicates), may be (`unknown`: only the service can say, so
   * `validate` warns and `validate --online` asks it), or are not (undefined).
   */
  spellings?: {
    keys(config: C): readonly string[];
    compare(a: C, b: C): Sameness | undefined;
  };
  /** `file secrets/app.token`: for tables and logs; never a secret. */
  describe(config: C): string;
  /**
   * Where the destination really is on this machine (links resolved), for sink types that write to
   * the local file system; used to keep sinks off the files the tool itself depends on.
   */
  localPath?(config: C): string;
  /**
   * False for a destination that cannot be read back (an exec sink without a `read` program): its
   * drift cannot be known, so no check reads it or rotates for it. Readable when absent.
   */
  readable?(config: C): boolean;
  /**
   * The environment variables a config takes credentials from (`…From` fields), each with its path
   * relative to the sink: checked to be set before any network call, like every other problem.
   */
  references?(config: C): Reference[];
  /** One client per run, shared by every token with a sink of this type. */
  open(context: SinkOpenContext): Promise<SinkClient<C>>;
}

/**
 * Talks to the destinations of one sink type. Writes are idempotent: writing the same secret again
 * answers `unchanged`. Errors never carry a secret.
 */
export interface SinkClient<C> {
  write(config: C, secret: Secret, meta: TokenMeta, options: { signal?: AbortSignal }): Promise<WriteResult>;
  /** What the destination holds now; undefined when it is missing or empty. */
  read(config: C, options: { signal?: AbortSignal }): Promise<SinkContent | undefined>;
  /** Credentials valid, destination reachable, permission to write: for `validate --online`. */
  preflight?(config: C, options: { signal?: AbortSignal }): Promise<void>;
  /**
   * The destination as the service names it, whatever spelling the policy used (AWS: the secret's
   * full ARN; Google: its name with the project number): for `validate --online` to find two
   * spellings of one destination. Undefined when the service does not know it yet (a secret still
   * to be created).
   */
  identify?(config: C, options: { signal?: AbortSignal }): Promise<string | undefined>;
  close(): Promise<void>;
}

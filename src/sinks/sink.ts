import type { ConfigIssue } from '../errors.js';
import type { WriteResult } from '../fs/atomic-write.js';
import type { Secret } from '../secret.js';

export type { WriteResult };

/** What a sink may know about the token besides its secret. */
export interface TokenMeta {
  name: string;
  id: string;
  expiresAt: Date | null;
}

/**
 * One configured destination of a token's secret. Writes are idempotent: writing the same secret
 * again answers `unchanged`. `describe()` names the destination and never includes a secret.
 */
export interface Sink {
  describe(): string;
  write(secret: Secret, meta: TokenMeta, options: { signal?: AbortSignal }): Promise<WriteResult>;
  close?(): Promise<void>;
}

export interface SinkParseContext {
  /** Relative paths in a sink's configuration are relative to the policy file's folder. */
  policyDir: string;
}

export type SinkParseResult<C> = { ok: true; config: C } | { ok: false; issues: ConfigIssue[] };

/**
 * A sink type: turns raw policy configuration into a typed, normalised config (every problem with
 * its path relative to the sink), and builds sinks from it.
 */
export interface SinkFactory<C extends { type: string }> {
  type: C['type'];
  parse(raw: unknown, context: SinkParseContext): SinkParseResult<C>;
  /** A stable identity of the destination, so two tokens cannot be configured to write to one place. */
  target(config: C): string;
  /**
   * Where the destination really is on this machine (links resolved), for sink types that write to
   * the local file system; used to keep sinks off the files the tool itself depends on.
   */
  localPath?(config: C): string;
  create(config: C): Sink;
}

import type { Clock } from '../clock.js';
import type { Env } from '../common/env-variables.js';
import type { Reference } from '../common/reference.js';
import type { ConfigIssue } from '../errors.js';
import type { Logger } from '../log/logger.js';
import type { ReloadOutcome } from '../rotation/outcome.js';
import type { Secret } from '../secret.js';

/** What a reload may say of the rotation that asks for it: never its secret. */
export interface RotatedToken {
  name: string;
  id: string;
  expiresAt: string | null;
  rotationId: string;
  rotatedAt: string;
}

export interface ReloadParseContext {
  /** Where a reload type finds its defaults (a namespace from the kubeconfig). */
  env: Env;
}

export type ReloadParseResult<C> = { ok: true; config: C } | { ok: false; issues: ConfigIssue[] };

export interface ReloadOpenContext {
  logger: Logger;
  env: Env;
  clock: Clock;
  reference(variable: string): Secret | undefined;
}

/**
 * The reloads of one run share this: `once` runs an action a single time per key, so that a
 * workload consuming several tokens rotated in one run restarts once.
 */
export interface ReloadRun {
  once(key: string, action: () => Promise<ReloadOutcome>): Promise<ReloadOutcome>;
  signal?: AbortSignal;
}

/** A kind of reload: parsed with the policy (cheap), its client opened (its own module) only when a run needs one. */
export interface ReloadType<C extends { type: string }> {
  type: C['type'];
  parse(raw: unknown, context: ReloadParseContext): ReloadParseResult<C>;
  describe(config: C): string;
  /** The environment variables it takes (a URL, a signing key), checked before any network call. */
  references?(config: C): Reference[];
  open(context: ReloadOpenContext): Promise<Reloader<C>>;
}

export interface Reloader<C> {
  /** Never throws: every failure is an outcome. */
  reload(config: C, token: RotatedToken, run: ReloadRun): Promise<ReloadOutcome[]>;
  /** For `validate --online`: the target is there and may be reloaded, checked without reloading it; throws what is wrong. */
  preflight?(config: C, options: { signal?: AbortSignal }): Promise<void>;
}

import type { Env } from '../common/env-variables.js';
import { forThisTurn } from '../common/for-this-turn.js';
import type { ConfigIssue } from '../errors.js';
import { defaultNamespace } from './connection.js';

/**
 * The namespace a configuration gives, or the default when it gives none: the rotator's own in a
 * cluster, else the kubeconfig context's. When there is no default, an issue at `namespace`.
 * Undefined also when the given one is not a string (its schema says why).
 */
export function namespaceOrDefault(raw: unknown, env: Env, issues: ConfigIssue[]): string | undefined {
  const given = (raw as { namespace?: unknown } | null)?.namespace;
  if (given !== undefined) return typeof given === 'string' ? given : undefined;
  const found = defaultOfThisParse(env);
  if (!found) issues.push({ path: 'namespace', message: 'required here: not in a cluster, and no kubeconfig context to take it from' });
  return found;
}

/**
 * The default namespace, found once per policy parse and environment: reading and parsing the
 * kubeconfig for each of thousands of sinks that name no namespace doubled the parse.
 */
const defaultsOfThisParse = forThisTurn(() => new WeakMap<Env, string | undefined>());

function defaultOfThisParse(env: Env): string | undefined {
  const defaults = defaultsOfThisParse();
  if (!defaults.has(env)) defaults.set(env, givenDefaults.get(env) ?? defaultNamespace(env));
  return defaults.get(env);
}

/** Environments made by withDefaultNamespace, and the namespace each stands for. */
const givenDefaults = new WeakMap<Env, string>();

/**
 * The environment as a pod of `namespace` sees it, for parsing a policy: what names no namespace
 * means this one, as it will in that pod, whatever this machine's kubeconfig says. For commands that
 * speak for a pod elsewhere (`token-rotator rbac --namespace`).
 */
export function withDefaultNamespace(env: Env, namespace: string): Env {
  const copy = { ...env };
  givenDefaults.set(copy, namespace);
  return copy;
}

import type { DependencyFailure } from '../../errors.js';

/**
 * The one JSON contract of every command's `--json`: `{apiVersion, kind, summary, problems, items}`,
 * described by `schema/output.schema.json`. A field's meaning never changes within an apiVersion;
 * a new field may appear, so readers ignore what they do not know. v2: one vocabulary for every
 * kind's summary (the items' own words, with `total` and `needsAttention` in each), and `id` is the
 * id the service was asked about (`policyId` beside it when the policy names another).
 */
export const API_VERSION = 'token-rotator/v2';

/** What every kind's summary carries: how many items, and how many of them (or, for `Validation`, problems) a person must see. */
export interface SummaryCounts {
  total: number;
  needsAttention: number;
}

export type OutputKind = 'PlanResult' | 'RunResult' | 'RotateResult' | 'Status' | 'Validation' | 'Rbac';

/** A failure every token met the same way, said once rather than per token. */
export interface SharedProblem {
  dependency: DependencyFailure['dependency'];
  kind: DependencyFailure['kind'];
  /** The origin it tried. */
  target: string;
  message: string;
  /** What to check first. */
  check: string;
  /** The tokens it stopped. */
  tokens: string[];
}

/**
 * A problem of the policy or the environment, as `validate --json` gives it: the path and message
 * of the text on stderr, and where in the policy file (1-based) when known.
 */
export interface ConfigProblem {
  path: string;
  message: string;
  line?: number;
  column?: number;
}

/** `problems` are the failures shared by every token, except for `Validation`, where they are the configuration's. */
export interface Envelope<K extends OutputKind, S extends SummaryCounts, I, P = SharedProblem> {
  apiVersion: typeof API_VERSION;
  kind: K;
  summary: S;
  problems: P[];
  items: I[];
}

export function envelope<K extends OutputKind, S extends SummaryCounts, I, P = SharedProblem>(
  kind: K,
  summary: S,
  items: I[],
  problems: P[] = [],
): Envelope<K, S, I, P> {
  return { apiVersion: API_VERSION, kind, summary, problems, items };
}

export function toJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

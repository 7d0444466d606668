/**
 * Faults the emulator injects, to rehearse what the real service and the network do on bad days.
 * `commit: true` makes a regenerate happen on the service before the fault, as when an answer is
 * lost after the service acted on the request.
 */
export type FaultAction =
  /**
   * Answer an error. With `commit`, a regenerate takes place first; `{{secret}}` in the message is
   * then replaced by the new secret, as a careless service might echo it.
   */
  | { kind: 'status'; status: number; message?: string; headers?: Record<string, string>; commit?: boolean }
  /** Close the connection without an answer (a reset). */
  | { kind: 'drop'; commit?: boolean }
  /**
   * Hold the request for `ms` (longer than the client's timeout: a timeout). With `commit`, the
   * regenerate takes place first and only the answer is held.
   */
  | { kind: 'hang'; ms: number; commit?: boolean }
  /** Commit, then answer 200 without the `token` field. */
  | { kind: 'omit-token' }
  /**
   * Commit, then answer 200 with a `token` field that holds nothing usable: `token` as given (the
   * empty string when absent; a number, null or an object is sent as such), as a service whose
   * serializer broke. The service acted and the secret is lost. Regenerate only: a retrieve ignores it.
   */
  | { kind: 'unusable-token'; token?: unknown }
  /**
   * Answer 200 with a body that is not the truth: the description of another token (`as`, an id),
   * and `patch` over it (a null value removes the field). A regenerate commits first and its answer
   * carries the new secret unless the patch removes `token`.
   */
  | { kind: 'answer'; as?: string; patch?: Record<string, unknown> }
  /** Answer with a redirect to `location` (another origin, say), without acting on the request. */
  | { kind: 'redirect'; status?: 301 | 302 | 303 | 307 | 308; location: string }
  /** Answer 200 with a gzip body that inflates to `bytes` zero bytes: a decompression bomb. */
  | { kind: 'gzip-bomb'; bytes: number; commit?: boolean };

export interface FaultRule {
  op: 'retrieve' | 'regenerate';
  /** Only for this token id; any when absent. */
  id?: string;
  /** How many matching requests to let through before it applies. */
  skip?: number;
  /** How many requests it applies to; then it is used up. */
  times?: number;
  action: FaultAction;
}

export class FaultPlan {
  #rules: Array<FaultRule & { remaining: number; toSkip: number }> = [];

  add(rule: FaultRule): void {
    this.#rules.push({ ...rule, remaining: rule.times ?? 1, toSkip: rule.skip ?? 0 });
  }

  clear(): void {
    this.#rules = [];
  }

  /** The first matching rule, used once. */
  take(op: FaultRule['op'], id: string): FaultAction | undefined {
    const rule = this.#rules.find((r) => r.op === op && (r.id === undefined || r.id === id) && r.remaining > 0);
    if (!rule) return undefined;
    if (rule.toSkip > 0) {
      rule.toSkip -= 1;
      return undefined;
    }
    rule.remaining -= 1;
    if (rule.remaining === 0) this.#rules = this.#rules.filter((r) => r !== rule);
    return rule.action;
  }
}

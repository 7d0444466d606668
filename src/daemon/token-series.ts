import type { Counter, Gauge } from 'prom-client';

type Labels = Record<string, string>;
type Metric = Counter<string> | Gauge<string>;

/** A series' identity: its metric and its labels in a fixed order. */
const keyOf = (metric: Metric, labels: Labels) =>
  `${(metric as unknown as { name: string }).name}${JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))}`;

/**
 * Every series a token has, so that a name leaving the policy takes all of them away (prom-client
 * removes a series only by its full set of labels) and a name entering it starts every counter at 0.
 */
export class TokenSeries {
  readonly #series = new Map<string, Map<string, { metric: Metric; labels: Labels }>>();

  #note(metric: Metric, labels: Labels & { token: string }): void {
    let own = this.#series.get(labels.token);
    if (!own) this.#series.set(labels.token, (own = new Map()));
    const key = keyOf(metric, labels);
    if (!own.has(key)) own.set(key, { metric, labels });
  }

  /** A counter's series, created at 0 when new: `rate()` and `increase()` see the first event. */
  zero(counter: Counter<string>, labels: Labels & { token: string }): void {
    counter.inc(labels, 0);
    this.#note(counter, labels);
  }

  inc(metric: Metric, labels: Labels & { token: string }, by = 1): void {
    metric.inc(labels, by);
    this.#note(metric, labels);
  }

  set(gauge: Gauge<string>, labels: Labels & { token: string }, value: number): void {
    gauge.set(labels, value);
    this.#note(gauge, labels);
  }

  remove(gauge: Gauge<string>, labels: Labels & { token: string }): void {
    gauge.remove(labels);
    this.#series.get(labels.token)?.delete(keyOf(gauge, labels));
  }

  tokens(): string[] {
    return [...this.#series.keys()];
  }

  forget(token: string): void {
    for (const { metric, labels } of this.#series.get(token)?.values() ?? []) metric.remove(labels);
    this.#series.delete(token);
  }
}

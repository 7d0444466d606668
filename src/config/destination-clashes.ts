import { type SinkConfig, sinkTarget, sinkTypesByName } from '../sinks/registry.js';
import type { Sameness } from '../sinks/sink.js';

/** A sink and where the policy has it: `tokens[0].sinks[1]`. */
export interface PlacedSink {
  config: SinkConfig;
  at: string;
}

/**
 * Two sinks on one destination (`same`), or perhaps on one (`unknown`: only the service can say),
 * `second` the later in the policy. `why` says how two spellings meet; absent when the targets are
 * equal (the same spelling, or one file through a link).
 */
export interface DestinationClash {
  first: PlacedSink;
  second: PlacedSink;
  verdict: Sameness['verdict'];
  why?: string;
}

/** Every sink of the policy with its path. */
export function placedSinks(tokens: ReadonlyArray<{ sinks: readonly SinkConfig[] }>): PlacedSink[] {
  return tokens.flatMap((token, t) => token.sinks.map((config, s) => ({ config, at: `tokens[${t}].sinks[${s}]` })));
}

/**
 * Sinks that write, or may write, where another does: two tokens there would each overwrite the
 * other's secret on every run, and two sinks of one token would share one journal mark. Equal
 * targets are one destination; a type whose spellings its target cannot settle alone (an AWS secret
 * by name and by ARN) compares the sinks that share one of its keys. A later sink is reported once
 * as the same as an earlier one (the first found), and as perhaps the same as each it may be.
 */
export function destinationClashes(sinks: readonly PlacedSink[]): DestinationClash[] {
  const clashes: DestinationClash[] = [];
  const byTarget = new Map<string, PlacedSink>();
  /** Per type and key, the sinks (one per target) that spelled it so far. */
  const byKey = new Map<string, PlacedSink[]>();
  for (const sink of sinks) {
    const target = sinkTarget(sink.config);
    const first = byTarget.get(target);
    if (first) {
      clashes.push({ first, second: sink, verdict: 'same' });
      continue;
    }
    byTarget.set(target, sink);
    const spellings = sinkTypesByName[sink.config.type].spellings;
    if (!spellings) continue;
    const compared = new Set<PlacedSink>();
    let same = false;
    for (const key of spellings.keys(sink.config)) {
      const bucket = `${sink.config.type}:${key}`;
      let earlier = byKey.get(bucket);
      if (!earlier) byKey.set(bucket, (earlier = []));
      for (const other of earlier) {
        if (compared.has(other)) continue;
        compared.add(other);
        const found = spellings.compare(other.config, sink.config);
        if (!found || (found.verdict === 'same' && same)) continue;
        same ||= found.verdict === 'same';
        clashes.push({ first: other, second: sink, verdict: found.verdict, why: found.why });
      }
      earlier.push(sink);
    }
  }
  return clashes;
}

import type { Policy } from '../../config/types.js';
import type { SinkConfig } from '../../sinks/registry.js';

/** A sink as every output names it: its type, its destination's identity and its description. */
export interface SinkRef {
  type: string;
  target: string;
  description: string;
}

/** Finds a sink of a token by the description or target the rotation reported it by. */
export type SinkLookup = (tokenName: string, described: string) => SinkRef;

export function sinkLookup(
  policy: Pick<Policy, 'tokens'>,
  sinks: { describe(config: SinkConfig): string; target(config: SinkConfig): string },
): SinkLookup {
  const byToken = new Map<string, SinkRef[]>(
    policy.tokens.map((t) => [t.name, t.sinks.map((s) => ({ type: s.type, target: sinks.target(s), description: sinks.describe(s) }))]),
  );
  return (tokenName, described) =>
    byToken.get(tokenName)?.find((s) => s.description === described || s.target === described) ?? {
      // A name that left the policy: what the rotation said is all there is.
      type: described.split(' ')[0] ?? 'unknown',
      target: described,
      description: described,
    };
}

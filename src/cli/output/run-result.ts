import type { Policy } from '../../config/types.js';
import type { RotatorError } from '../../errors.js';
import type { TokenOutcome } from '../../rotation/outcome.js';
import type { SinkConfig } from '../../sinks/registry.js';
import { formatOutcomes } from '../format-outcomes.js';
import { terminalWidth } from '../format-table.js';
import type { CliIo } from '../io.js';
import { actionSummary } from './counts.js';
import { envelope, toJson } from './envelope.js';
import { policyIdOf } from './policy-id.js';
import { runItem } from './run-items.js';
import { sharedProblems } from './shared-problems.js';
import { sinkLookup } from './sink-ref.js';

/**
 * What `once` and `rotate` print (the table, or the JSON envelope) and the exit code the shared
 * failure decides: 3 when a dependency every token needs failed and nothing succeeded.
 */
export function writeRunResult(
  kind: 'RunResult' | 'RotateResult',
  outcomes: TokenOutcome[],
  context: {
    policy: Pick<Policy, 'tokens'>;
    sinks: { describe(config: SinkConfig): string; target(config: SinkConfig): string };
    tripped: RotatorError | undefined;
    json: boolean | undefined;
    io: CliIo;
  },
): { sharedFailure: boolean } {
  const lookup = sinkLookup(context.policy, context.sinks);
  const policyId = policyIdOf(context.policy);
  const items = outcomes.map((o) => runItem(o, lookup, policyId));
  const problems = sharedProblems(context.tripped, items);
  context.io.stdout.write(
    context.json
      ? toJson(envelope(kind, actionSummary(items), items, problems))
      : formatOutcomes(items, { width: terminalWidth(context.io.stdout), problems }),
  );
  return { sharedFailure: problems.length > 0 && items.every((i) => i.result !== 'ok') };
}

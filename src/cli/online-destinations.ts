import { destinationClashes, type PlacedSink, placedSinks } from '../config/destination-clashes.js';
import type { Policy } from '../config/types.js';
import type { SinkConfig } from '../sinks/registry.js';
import type { SinkSet } from '../sinks/sink-set.js';
import type { OnlineCheck } from './online-check.js';

type Sinks = Pick<SinkSet<SinkConfig>, 'identify' | 'target' | 'describe'>;

/**
 * What only the services know of where the sinks write: each names its destination its own way (AWS
 * the full ARN of a name or a partial ARN, Google a secret by its project's number), so two sinks
 * the policy spells differently but a service names alike write to one place: a failed check naming
 * both. The pairs the policy alone left open (`validate` warned of them) are answered either way, or
 * said to be unknown while the service does not know the destination yet (a secret to be created).
 */
export async function destinationChecks(tokens: Policy['tokens'], sinks: Sinks): Promise<OnlineCheck[]> {
  const placed = placedSinks(tokens);
  const names = new Map<string, string | undefined>();
  for (const sink of placed) {
    const target = sinks.target(sink.config);
    if (names.has(target)) continue;
    // A sink that cannot be reached says so in its own check; here it is only not known.
    names.set(target, await sinks.identify(sink.config, {}).catch(() => undefined));
  }
  const nameOf = (sink: PlacedSink) => names.get(sinks.target(sink.config));

  const checks: OnlineCheck[] = [];
  const byName = new Map<string, PlacedSink>();
  for (const sink of placed) {
    const name = nameOf(sink);
    if (name === undefined) continue;
    const key = `${sink.config.type}:${name}`;
    const first = byName.get(key);
    if (!first) byName.set(key, sink);
    else if (sinks.target(first.config) !== sinks.target(sink.config)) checks.push(oneDestination(first, sink, name, sinks));
  }
  for (const { first, second, verdict, why } of destinationClashes(placed)) {
    if (verdict !== 'unknown') continue;
    const [a, b] = [nameOf(first), nameOf(second)];
    const pair = `${first.at} and ${second.at}`;
    if (a === undefined || b === undefined) {
      const unknown = sinks.describe((a === undefined ? first : second).config);
      checks.push({ check: 'sink', target: pair, result: 'not checked', note: `${why}; the service does not know ${unknown} yet` });
    } else if (a !== b) {
      checks.push({ check: 'sink', target: pair, result: 'ok', note: `two destinations: ${a} and ${b}` });
    }
  }
  return checks;
}

function oneDestination(first: PlacedSink, second: PlacedSink, name: string, sinks: Sinks): OnlineCheck {
  return {
    check: 'sink',
    target: `${first.at} and ${second.at}`,
    result: 'failed',
    note:
      `one destination: ${name} is both ${sinks.describe(first.config)} and ${sinks.describe(second.config)}; ` +
      'each would overwrite the other on every run: remove one, or point it elsewhere',
  };
}

import { SinkError } from '../errors.js';
import type { DriftFinding } from '../policy/sink-drift.js';
import type { StateRecord } from '../state/state-record.js';
import type { RotationContext } from './context.js';
import { errorSummary } from './outcome.js';
import { asRecorded } from './recorded-destinations.js';

/**
 * Step 2, before any regenerate: every sink of the name proves, without changing anything, that it
 * can take the write (a folder it may write, a dry-run apply, its capabilities). A new secret that
 * no sink can take would only cut the old token's life to the overlap while the apps keep it; so a
 * sink that cannot stops the rotation here, with the old token untouched.
 */
export async function preflightSinks(
  ctx: RotationContext,
  record: StateRecord | undefined,
  /** What this check found of the sinks: one read as another writer's or another token's cannot take it either. */
  drift: readonly DriftFinding[],
): Promise<void> {
  const { deps, policy, log } = ctx;
  const unowned = new Map(drift.filter((d) => d.kind === 'unowned').map((d) => [d.target, `${d.sink}: ${d.detail}`]));
  const results = await Promise.all(
    policy.sinks.map(async (config) => {
      const refused = unowned.get(deps.sinks.target(config));
      if (refused) return refused;
      try {
        await deps.sinks.preflight(asRecorded(config, deps, record), { signal: ctx.signal });
        return undefined;
      } catch (error) {
        if ((error as Error)?.name === 'AbortError') throw error;
        return errorSummary(error).message;
      }
    }),
  );
  const problems = results.filter((r): r is string => r !== undefined);
  if (problems.length === 0) return;
  log.error({ step: 'preflight', problems }, 'a sink cannot take the new secret; nothing regenerated');
  throw new SinkError(`not rotated, the old token is untouched: a sink cannot take the new secret: ${problems.join('; ')}`);
}

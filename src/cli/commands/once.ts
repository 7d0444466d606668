import { systemClock } from '../../clock.js';
import { openRotationDeps, warnAboutUnsafeSettings } from '../../compose/rotation-deps.js';
import { createLogger } from '../../log/logger.js';
import { createNotifier } from '../../notify/notifier.js';
import { needsAttention } from '../../rotation/outcome.js';
import { runOnce } from '../../rotation/run-once.js';
import { formatOutcomes } from '../format-outcomes.js';
import { type CliIo, EXIT } from '../io.js';
import { type GlobalOptions, loadRuntime } from '../load-runtime.js';

/** One pass over every token: rotate what is due. Exit 1 when any token failed. */
export async function onceCommand(options: GlobalOptions & { json?: boolean }, io: CliIo): Promise<number> {
  const { settings, policy, notificationTargets, env } = await loadRuntime(options, io);
  const logger = createLogger({ level: settings.logLevel });
  warnAboutUnsafeSettings(settings, env, logger);
  const opened = await openRotationDeps(settings, logger, systemClock, env, {}, io.cwd);
  const outcomes = await (async () => {
    const rotated = await runOnce(policy, opened.deps, { concurrency: settings.concurrency });
    // After every commit of the run, so that a workload consuming several of its tokens restarts once.
    const tokens = new Map(policy.tokens.map((t) => [t.name, t]));
    return opened.runReloads(rotated.map((outcome) => ({ outcome, token: tokens.get(outcome.name) })));
  })().finally(() => opened.close());
  const notify = createNotifier(notificationTargets, logger);
  await Promise.all(outcomes.map((o) => notify(o, systemClock.now())));
  io.stdout.write(options.json ? `${JSON.stringify(outcomes, null, 2)}\n` : formatOutcomes(outcomes));
  const failed = outcomes.filter((o) => o.action === 'failed');
  const orphans = outcomes.flatMap((o) => o.orphans);
  const drifted = outcomes
    .filter((o) => o.drift?.length)
    .map((o) => ({ name: o.name, sinks: o.drift!.map((d) => `${d.sink} (${d.kind})`) }));
  logger.info(
    {
      rotated: outcomes.filter((o) => o.action === 'rotated').length,
      reloadsFailed: outcomes.flatMap((o) =>
        (o.reloads ?? []).filter((r) => r.result === 'failed').map((r) => ({ name: o.name, target: r.target })),
      ),
      skipped: outcomes.filter((o) => o.action === 'skipped').length,
      failed: failed.map((o) => o.name),
      pending: outcomes.filter((o) => o.pending?.length).map((o) => ({ name: o.name, sinks: o.pending })),
      orphans: orphans.length,
      drift: drifted,
    },
    'run finished',
  );
  // An orphan is a failure even when the name was rotated again: a token exists that nobody can use.
  // A sink left lacking its secret (onDrift: report) is one too.
  return outcomes.some(needsAttention) ? EXIT.failed : EXIT.ok;
}

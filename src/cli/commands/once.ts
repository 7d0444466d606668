import { systemClock } from '../../clock.js';
import { openEventRecorder, withKubernetesEvents } from '../../compose/kubernetes-events.js';
import { openRotationDeps, warnAboutUnsafeSettings } from '../../compose/rotation-deps.js';
import { StateKeyError } from '../../errors.js';
import { createLogger } from '../../log/logger.js';
import { createNotifier } from '../../notify/notifier.js';
import { needsAttention } from '../../rotation/outcome.js';
import { runOnce } from '../../rotation/run-once.js';
import { createShutdown, exitCodeForStop, stopOnSignals } from '../../rotation/shutdown.js';
import { guardSharedDependencies } from '../dependency-breaker.js';
import { type CliIo, EXIT } from '../io.js';
import { type GlobalOptions, loadRuntime } from '../load-runtime.js';
import { writeRunResult } from '../output/run-result.js';

/**
 * One pass over every token: rotate what is due. Exit 1 when any token failed, 3 when nothing could
 * be checked because a dependency every token needs failed.
 */
export async function onceCommand(options: GlobalOptions & { json?: boolean }, io: CliIo): Promise<number> {
  const { settings, policy, notificationTargets, env } = await loadRuntime(options, io);
  const logger = createLogger({ level: settings.logLevel });
  warnAboutUnsafeSettings(settings, env, logger);
  const opened = await openRotationDeps(settings, logger, systemClock, env, {}, io.cwd);
  const guarded = guardSharedDependencies(opened.deps.api, { tokens: policy.tokens.length, apiUrl: settings.apiUrl });
  // A CronJob's pod is sent SIGTERM on eviction: stop starting names, and let the ones in flight end.
  const shutdown = createShutdown();
  const removeSignalHandlers = stopOnSignals(shutdown, { deadlineMs: 8_000, logger });
  const outcomes = await (async () => {
    const rotated = await runOnce(
      policy,
      { ...opened.deps, api: guarded.api },
      { concurrency: settings.concurrency, signal: shutdown.abort, stopping: shutdown.stopping },
    );
    // After every commit of the run, so that a workload consuming several of its tokens restarts once.
    const tokens = new Map(policy.tokens.map((t) => [t.name, t]));
    return opened.runReloads(rotated.map((outcome) => ({ outcome, token: tokens.get(outcome.name) })));
  })().finally(() => {
    removeSignalHandlers();
    shutdown.dispose();
    return opened.close();
  });
  const events = openEventRecorder(settings, { env, logger, clock: systemClock });
  const notify = withKubernetesEvents(createNotifier(notificationTargets, logger), policy, events);
  await Promise.all(outcomes.map((o) => notify(o, systemClock.now())));
  const { sharedFailure } = writeRunResult('RunResult', outcomes, {
    policy,
    sinks: opened.deps.sinks,
    tripped: guarded.tripped(),
    json: options.json,
    io,
  });
  const failed = outcomes.filter((o) => o.action === 'failed');
  const orphans = outcomes.flatMap((o) => o.orphans);
  const drifted = outcomes
    .filter((o) => o.drift?.length)
    .map((o) => ({ name: o.name, sinks: o.drift!.map((d) => `${d.sink} (${d.kind})`) }));
  logger.info(
    {
      rotated: outcomes.filter((o) => o.action === 'rotated').length,
      redelivered: outcomes.filter((o) => o.action === 'redelivered').length,
      reloadsFailed: outcomes.flatMap((o) =>
        (o.reloads ?? []).filter((r) => r.result === 'failed').map((r) => ({ name: o.name, target: r.target })),
      ),
      skipped: outcomes.filter((o) => o.action === 'skipped').length,
      failed: failed.map((o) => o.name),
      interrupted: outcomes.filter((o) => o.action === 'interrupted').map((o) => o.name),
      pending: outcomes.filter((o) => o.pending?.length).map((o) => ({ name: o.name, sinks: o.pending })),
      orphans: orphans.length,
      drift: drifted,
    },
    'run finished',
  );
  // An orphan is a failure even when the name was rotated again: a token exists that nobody can use.
  // A sink left lacking its secret (onDrift: report) is one too.
  const stopped = exitCodeForStop(shutdown.reason);
  if (stopped !== undefined) return stopped;
  if (sharedFailure) return EXIT.dependency;
  // No key of this run opens what the state holds: the configuration is wrong, nothing was rotated for it.
  if (outcomes.some((o) => o.error?.code === StateKeyError.code)) return EXIT.usage;
  return outcomes.some(needsAttention) ? EXIT.failed : EXIT.ok;
}

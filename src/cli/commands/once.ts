import { systemClock } from '../../clock.js';
import { createLogger } from '../../log/logger.js';
import { runOnce } from '../../rotation/run-once.js';
import { buildRotationDeps } from '../build-deps.js';
import { formatOutcomes } from '../format-outcomes.js';
import { EXIT, type CliIo } from '../io.js';
import { loadRuntime, type GlobalOptions } from '../load-runtime.js';

/** One pass over every token: rotate what is due. Exit 1 when any token failed. */
export async function onceCommand(options: GlobalOptions & { json?: boolean }, io: CliIo): Promise<number> {
  const { settings, policy } = await loadRuntime(options, io);
  const logger = createLogger({ level: settings.logLevel });
  const deps = buildRotationDeps(settings, logger, systemClock);
  const outcomes = await runOnce(policy, deps, { concurrency: settings.concurrency });
  io.stdout.write(options.json ? `${JSON.stringify(outcomes, null, 2)}\n` : formatOutcomes(outcomes));
  const failed = outcomes.filter((o) => o.action === 'failed');
  logger.info(
    { rotated: outcomes.filter((o) => o.action === 'rotated').length, skipped: outcomes.filter((o) => o.action === 'skipped').length, failed: failed.map((o) => o.name) },
    'run finished',
  );
  return failed.length > 0 ? EXIT.failed : EXIT.ok;
}

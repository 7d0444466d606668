import { systemClock } from '../../clock.js';
import { openRotationDeps } from '../../compose/rotation-deps.js';
import { createLogger } from '../../log/logger.js';
import { planAll, type PlanEntry } from '../../rotation/plan.js';
import { formatTable, shortDate } from '../format-table.js';
import { type CliIo, EXIT } from '../io.js';
import { type GlobalOptions, loadRuntime } from '../load-runtime.js';

function formatPlan(entries: PlanEntry[]): string {
  return formatTable(
    ['TOKEN', 'ID', 'EXPIRES', 'ACTION', 'REASON'],
    entries.map((e) => [e.name, e.id, shortDate(e.expiresAt), e.action, e.reason]),
  );
}

/** The decisions `once` would take now; reads the service and the state, writes nothing. */
export async function planCommand(options: GlobalOptions & { json?: boolean }, io: CliIo): Promise<number> {
  const { settings, policy } = await loadRuntime(options, io);
  const logger = createLogger({ level: settings.logLevel });
  const opened = await openRotationDeps(settings, logger, systemClock, io.env, {}, io.cwd);
  const entries = await planAll(policy, opened.deps, { concurrency: settings.concurrency }).finally(() => opened.close());
  io.stdout.write(options.json ? `${JSON.stringify(entries, null, 2)}\n` : formatPlan(entries));
  return entries.some((e) => e.action === 'error') ? EXIT.failed : EXIT.ok;
}

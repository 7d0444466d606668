import { systemClock } from '../../clock.js';
import { openRotationDeps } from '../../compose/rotation-deps.js';
import { createLogger } from '../../log/logger.js';
import { planAll } from '../../rotation/plan.js';
import { guardSharedDependencies } from '../dependency-breaker.js';
import { formatTable, terminalWidth } from '../format-table.js';
import { type CliIo, EXIT } from '../io.js';
import { type GlobalOptions, loadRuntime } from '../load-runtime.js';
import { actionCountsLine, actionSummary, actionWord } from '../output/counts.js';
import { envelope, type SharedProblem, toJson } from '../output/envelope.js';
import { shortDate, showExpiry } from '../output/expiry.js';
import { type PlanItem, planItem } from '../output/plan-items.js';
import { policyIdOf } from '../output/policy-id.js';
import { formatProblems, isShared, sharedProblems } from '../output/shared-problems.js';
import { sinkLookup } from '../output/sink-ref.js';

function formatPlan(items: PlanItem[], problems: SharedProblem[], width: number | undefined): string {
  const own = items.filter((i) => !isShared(problems, i.error));
  const table = own.length
    ? formatTable(
        ['TOKEN', 'ACTION', 'ID', 'EXPIRES', 'DUE', 'REASON'],
        own.map((i) => [
          i.name,
          actionWord(i),
          i.id ?? '-',
          showExpiry(i),
          i.dueAt === undefined ? (i.result === 'failed' ? 'unknown' : '-') : shortDate(i.dueAt),
          i.reason,
        ]),
        { width, flexible: [5] },
      )
    : '';
  return formatProblems(problems, items.length) + table + actionCountsLine(actionSummary(items));
}

/** The decisions `once` would take now; reads the service and the state, writes nothing. */
export async function planCommand(options: GlobalOptions & { json?: boolean }, io: CliIo): Promise<number> {
  const { settings, policy, env } = await loadRuntime(options, io);
  const logger = createLogger({ level: settings.logLevel });
  // The environment with the --dotenv file's variables, as `once` has it: the sinks find their
  // credentials and the kubeconfig there.
  const opened = await openRotationDeps(settings, logger, systemClock, env, {}, io.cwd);
  const guarded = guardSharedDependencies(opened.deps.api, { tokens: policy.tokens.length, apiUrl: settings.apiUrl });
  const entries = await planAll(policy, { ...opened.deps, api: guarded.api }, { concurrency: settings.concurrency }).finally(() =>
    opened.close(),
  );
  const lookup = sinkLookup(policy, opened.deps.sinks);
  const policyId = policyIdOf(policy);
  const items = entries.map((e) => planItem(e, lookup, policyId));
  const problems = sharedProblems(guarded.tripped(), items);
  io.stdout.write(
    options.json
      ? toJson(envelope('PlanResult', actionSummary(items), items, problems))
      : formatPlan(items, problems, terminalWidth(io.stdout)),
  );
  if (problems.length > 0 && items.every((i) => i.result === 'failed')) return EXIT.dependency;
  // A sink that cannot be read (the plan of that token is not whole) or that holds another tool's
  // secret (no run can repair it) makes `once` exit 1 too: the same drift kinds, the same answer.
  return items.some((i) => i.needsAttention) ? EXIT.failed : EXIT.ok;
}

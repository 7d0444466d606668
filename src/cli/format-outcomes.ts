import { formatTable, type TableOptions } from './format-table.js';
import { actionCountsLine, actionSummary, actionWord } from './output/counts.js';
import type { SharedProblem } from './output/envelope.js';
import { plural, shortDate, showExpiry } from './output/expiry.js';
import type { RunItem } from './output/run-items.js';
import { formatProblems, isShared } from './output/shared-problems.js';

/** Why, for a person: a failed sink's own error (it names the sink), else the error, else the decision. */
function why(item: RunItem): string {
  const sinkErrors = item.sinks.filter((s) => s.result === 'failed' && s.error).map((s) => s.error!);
  const text =
    item.result === 'failed'
      ? sinkErrors.length
        ? `${sinkErrors.join('; ')}${item.pending.length ? '; the secret stays staged and the next run delivers it' : ''}`
        : (item.error?.message ?? item.reason)
      : item.reason;
  return text + (item.orphans.length ? ` [${plural(item.orphans.length, 'orphaned token')} reported]` : '');
}

/**
 * The table `once` and `rotate` print: per token what was done, the ids, the expiry of the token now
 * current, when the replaced one stops working, the sinks and why. Fitted to the terminal's width.
 */
export function formatOutcomes(items: RunItem[], options: { width?: number | undefined; problems?: SharedProblem[] } = {}): string {
  const problems = options.problems ?? [];
  const table: TableOptions = { width: options.width, flexible: [2, 5, 6] };
  // The tokens a shared failure stopped are named once under it, not given a line each.
  const own = items.filter((o) => !isShared(problems, o.error));
  const rows = own.map((o) => [
    o.name,
    actionWord(o),
    o.newId ? `${o.id} -> ${o.newId}` : (o.id ?? '-'),
    o.newId !== undefined ? shortDate(o.newExpiresAt) : showExpiry(o),
    shortDate(o.existingTokenExpiresAt),
    o.sinks.length ? o.sinks.map((s) => s.result).join(', ') : '-',
    why(o),
  ]);
  const legend = items.some((o) => o.existingTokenExpiresAt)
    ? 'EXPIRES: of the token now current\nOLD TOKEN ENDS: when the replaced token stops working (the overlap)\n'
    : '';
  return (
    formatProblems(problems, items.length) +
    (rows.length ? formatTable(['TOKEN', 'ACTION', 'ID', 'EXPIRES', 'OLD TOKEN ENDS', 'SINKS', 'REASON'], rows, table) : '') +
    legend +
    formatReloads(items, table.width) +
    formatEarlierTokens(items, table.width) +
    actionCountsLine(actionSummary(items))
  );
}

/** After the rotations: each workload restarted and hook called, once per target. */
function formatReloads(items: RunItem[], width: number | undefined): string {
  const rows = items.flatMap((o) => o.reloads.map((r) => [o.name, r.target, r.result, r.message ?? '']));
  if (rows.length === 0) return '';
  return `\nreloads:\n${formatTable(['TOKEN', 'TARGET', 'RESULT', 'NOTE'], rows, { width })}`;
}

/** After an emergency rotation: what became of each earlier token of the name that still worked. */
function formatEarlierTokens(items: RunItem[], width: number | undefined): string {
  const rows = items.flatMap((o) =>
    (o.earlierTokens ?? []).map((t) => [
      o.name,
      t.id,
      t.result === 'still-alive' ? 'STILL ALIVE' : t.result,
      t.result === 'gone' ? '-' : shortDate(t.expiresAt),
      t.error ?? (t.result === 'still-alive' ? "delete it in the service's console" : ''),
    ]),
  );
  if (rows.length === 0) return '';
  return `\nearlier tokens of these names that still worked:\n${formatTable(['TOKEN', 'ID', 'RESULT', 'STOPS', 'NOTE'], rows, { width })}`;
}

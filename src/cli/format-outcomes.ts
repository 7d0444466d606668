import type { TokenOutcome } from '../rotation/outcome.js';
import { formatTable, shortDate } from './format-table.js';

/** The table `once` prints: per token what was done, the ids, the expiries, the sinks and why. */
export function formatOutcomes(outcomes: TokenOutcome[]): string {
  const table = formatTable(
    ['TOKEN', 'ACTION', 'ID', 'EXPIRES', 'NEW EXPIRES', 'OLD STOPS', 'SINKS', 'REASON'],
    outcomes.map((o) => [
      o.name,
      o.action,
      o.newId ? `${o.oldId} -> ${o.newId}` : o.oldId,
      shortDate(o.expiresAt),
      shortDate(o.newExpiresAt),
      shortDate(o.existingTokenExpiresAt),
      o.sinks.length ? o.sinks.map((s) => `${s.sink} (${s.result})`).join(', ') : '-',
      (o.error && o.action === 'failed' ? o.error.message : o.reason) +
        (o.orphans.length ? ` [${o.orphans.length} orphaned token(s) reported]` : ''),
    ]),
  );
  return table + formatReloads(outcomes) + formatEarlierTokens(outcomes);
}

/** After the rotations: each workload restarted and hook called, once per target. */
function formatReloads(outcomes: TokenOutcome[]): string {
  const rows = outcomes.flatMap((o) => (o.reloads ?? []).map((r) => [o.name, r.target, r.result, r.message ?? '']));
  if (rows.length === 0) return '';
  return `\nreloads:\n${formatTable(['TOKEN', 'TARGET', 'RESULT', 'NOTE'], rows)}`;
}

/** After an emergency rotation: what became of each earlier token of the name that still worked. */
function formatEarlierTokens(outcomes: TokenOutcome[]): string {
  const rows = outcomes.flatMap((o) =>
    (o.earlierTokens ?? []).map((t) => [
      o.name,
      t.id,
      t.result === 'still-alive' ? 'STILL ALIVE' : t.result,
      t.result === 'gone' ? '-' : shortDate(t.expiresAt),
      t.error ?? (t.result === 'still-alive' ? "delete it in the service's console" : ''),
    ]),
  );
  if (rows.length === 0) return '';
  return `\nearlier tokens of these names that still worked:\n${formatTable(['TOKEN', 'ID', 'RESULT', 'STOPS', 'NOTE'], rows)}`;
}

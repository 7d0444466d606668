import type { TokenOutcome } from '../rotation/outcome.js';
import { formatTable, shortDate } from './format-table.js';

/** The table `once` prints: per token what was done, the ids, the expiries, the sinks and why. */
export function formatOutcomes(outcomes: TokenOutcome[]): string {
  return formatTable(
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
}

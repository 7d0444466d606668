import { describeSkew, SKEW_WARNING_MS } from '../../api/service-clock.js';
import { systemClock } from '../../clock.js';
import { formatDuration } from '../../common/duration.js';
import { findStrayEntries } from '../../rotation/stray-entries.js';
import { strayStatus, type TokenStatus, tokenStatus, unreadableStatus } from '../../rotation/token-status.js';
import { createSink, sinkTarget } from '../../sinks/registry.js';
import { fileJournal } from '../../state/file-journal.js';
import { fileStateStore } from '../../state/file-state-store.js';
import { formatTable, shortDate } from '../format-table.js';
import { type CliIo, EXIT } from '../io.js';
import { type GlobalOptions, loadRuntime } from '../load-runtime.js';

function formatStatus(rows: TokenStatus[]): string {
  return formatTable(
    ['TOKEN', 'ID', 'EXPIRES', 'LAST ROTATED', 'NEXT DUE', 'PENDING', 'LAST ERROR'],
    rows.map((s) => [
      s.name,
      s.currentId,
      shortDate(s.expiresAt),
      s.lastRotatedAt ? shortDate(s.lastRotatedAt) : '-',
      s.nextDueAt ? shortDate(s.nextDueAt) : 'never',
      s.pending.length ? s.pending.join(', ') : '-',
      s.lastError
        ? `${s.lastError.message}${s.consecutiveFailures ? ` (${s.consecutiveFailures}x${s.backoffUntil ? `, backing off until ${shortDate(s.backoffUntil)}` : ''})` : ''}`
        : '-',
    ]),
  );
}

/** A line under the table when the last measured skew of the service's clock is worth knowing. */
function skewNote(rows: TokenStatus[]): string {
  const offsets = rows.map((r) => r.serviceClockOffsetMs).filter((o): o is number => o !== null);
  const worst = offsets.reduce<number | undefined>((a, o) => (a === undefined || Math.abs(o) > Math.abs(a) ? o : a), undefined);
  if (worst === undefined || Math.abs(worst) <= SKEW_WARNING_MS) return '';
  return `\nclock: the token service's clock was ${describeSkew(worst, formatDuration)} this machine's when last measured; times sent to it are corrected, but fix this machine's clock\n`;
}

/** Per token, from the state folder alone: current id, expiry, last rotation, next due, pending, last error. */
export async function statusCommand(options: GlobalOptions & { json?: boolean }, io: CliIo): Promise<number> {
  const { settings, policy } = await loadRuntime(options, io);
  const state = fileStateStore(settings.stateDir);
  const journal = fileJournal(settings.stateDir);
  const now = systemClock.now();
  const sink = { describe: (c: Parameters<typeof createSink>[0]) => createSink(c).describe(), target: sinkTarget };
  const rows = await Promise.all(
    policy.tokens.map(async (token) => {
      try {
        return tokenStatus(token, await state.read(token.name), await journal.read(token.name), now, sink);
      } catch (error) {
        return unreadableStatus(token, error);
      }
    }),
  );
  rows.push(...(await findStrayEntries(policy, journal)).map(strayStatus));
  io.stdout.write(options.json ? `${JSON.stringify(rows, null, 2)}\n` : formatStatus(rows) + skewNote(rows));
  return rows.some((r) => r.lastError || r.pending.length) ? EXIT.failed : EXIT.ok;
}

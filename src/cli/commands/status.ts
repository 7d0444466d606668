import { describeSkew, SKEW_WARNING_MS } from '../../api/service-clock.js';
import { systemClock } from '../../clock.js';
import { formatDuration } from '../../common/duration.js';
import { referenceReader } from '../../common/reference.js';
import { createLogger } from '../../log/logger.js';
import { assessSinks, describeDrift } from '../../policy/sink-drift.js';
import { snapshotSinks } from '../../rotation/assess-token.js';
import { findStrayEntries } from '../../rotation/stray-entries.js';
import { strayStatus, type TokenStatus, tokenStatus, unreadableStatus } from '../../rotation/token-status.js';
import { sinkTypesByName } from '../../sinks/registry.js';
import { openSinkSet } from '../../sinks/sink-set.js';
import { openStateBackend, type StateBackendName } from '../../state/backends/registry.js';
import { formatTable, shortDate } from '../format-table.js';
import { type CliIo, EXIT } from '../io.js';
import { type GlobalOptions, loadRuntime } from '../load-runtime.js';

function formatStatus(rows: TokenStatus[]): string {
  return formatTable(
    ['TOKEN', 'ID', 'EXPIRES', 'LAST ROTATED', 'NEXT DUE', 'PENDING', 'DRIFT', 'LAST ERROR'],
    rows.map((s) => [
      s.name,
      s.currentId,
      shortDate(s.expiresAt),
      s.lastRotatedAt ? shortDate(s.lastRotatedAt) : '-',
      s.nextDueAt ? shortDate(s.nextDueAt) : 'never',
      s.pending.length ? s.pending.join(', ') : '-',
      s.drift.length ? s.drift.map(describeDrift).join('; ') : '-',
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

/**
 * Per token, from the state and the sinks alone (no call to the token service): current id, expiry,
 * last rotation, next due, pending deliveries, drifted sinks, last error.
 */
export async function statusCommand(options: GlobalOptions & { json?: boolean }, io: CliIo): Promise<number> {
  const { settings, policy, env } = await loadRuntime(options, io);
  const logger = createLogger({ level: settings.logLevel });
  const backend = await openStateBackend(settings.stateBackend as StateBackendName, {
    dir: settings.stateDir,
    env,
    clock: systemClock,
    logger,
  });
  const sinks = openSinkSet(sinkTypesByName, { logger, env, reference: referenceReader(env, io.cwd) });
  const now = systemClock.now();
  try {
    const rows = await Promise.all(
      policy.tokens.map(async (token) => {
        try {
          const [record, entry, snapshot] = await Promise.all([
            backend.state.read(token.name),
            backend.journal.read(token.name),
            snapshotSinks(token, { sinks, stateKey: settings.stateKey }),
          ]);
          const { drift } = assessSinks(snapshot.readings, record?.sinks);
          return tokenStatus(token, record, entry, now, sinks, drift);
        } catch (error) {
          return unreadableStatus(token, error);
        }
      }),
    );
    rows.push(...(await findStrayEntries(policy, backend.journal)).map(strayStatus));
    io.stdout.write(options.json ? `${JSON.stringify(rows, null, 2)}\n` : formatStatus(rows) + skewNote(rows));
    return rows.some((r) => r.lastError || r.pending.length || r.drift.length) ? EXIT.failed : EXIT.ok;
  } finally {
    await sinks.close();
  }
}

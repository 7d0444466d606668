import { describeSkew, SKEW_WARNING_MS } from '../../api/service-clock.js';
import { systemClock } from '../../clock.js';
import { formatDuration } from '../../common/duration.js';
import { referenceReader } from '../../common/reference.js';
import { openState } from '../../compose/open-state.js';
import { createLogger } from '../../log/logger.js';
import { assessSinks } from '../../policy/sink-drift.js';
import { reclaimRecorded, snapshotSinks } from '../../rotation/assess-token.js';
import { learnStateSecrets } from '../../rotation/state-secrets.js';
import { findStrayEntries } from '../../rotation/stray-entries.js';
import { strayStatus, type TokenStatus, tokenStatus, unreadableStatus } from '../../rotation/token-status.js';
import { sinkTypesByName } from '../../sinks/registry.js';
import { openSinkSet } from '../../sinks/sink-set.js';
import { formatTable, terminalWidth } from '../format-table.js';
import { type CliIo, EXIT } from '../io.js';
import { type GlobalOptions, loadRuntime } from '../load-runtime.js';
import { countsLine } from '../output/counts.js';
import { describeDriftItem } from '../output/drift-items.js';
import { envelope, toJson } from '../output/envelope.js';
import { shortDate, showExpiry } from '../output/expiry.js';
import { policyIdOf } from '../output/policy-id.js';
import { sinkLookup } from '../output/sink-ref.js';
import { expiryKnown, type StatusItem, statusItem, statusSummary } from '../output/status-items.js';

function formatStatus(items: StatusItem[], width: number | undefined): string {
  return formatTable(
    ['TOKEN', 'ID', 'HEALTH', 'EXPIRES', 'LAST ROTATED', 'NEXT DUE', 'PENDING', 'DRIFT', 'LAST ERROR'],
    items.map((s) => [
      s.name,
      s.id ?? '-',
      s.health,
      showExpiry(s),
      s.lastRotatedAt ? shortDate(s.lastRotatedAt) : '-',
      s.dueAt === undefined ? 'unknown' : shortDate(s.dueAt),
      s.pending.length ? s.pending.join(', ') : '-',
      s.drift.length ? s.drift.map(describeDriftItem).join('; ') : '-',
      s.lastError
        ? `${s.lastError.message}${s.consecutiveFailures ? ` (${s.consecutiveFailures}x${s.backoffUntil ? `, backing off until ${shortDate(s.backoffUntil)}` : ''})` : ''}`
        : '-',
    ]),
    { width, flexible: [6, 7, 8] },
  );
}

/** `3 tokens: ok 1, attention 1, unknown 1; 2 need attention`, in the words of the JSON's summary. */
function summaryLine(items: StatusItem[]): string {
  const { total, ok, attention, unknown, needsAttention } = statusSummary(items);
  const legend = unknown ? 'unknown: never checked, or no check has succeeded yet\n' : '';
  return (
    legend +
    countsLine(
      total,
      [
        ['ok', ok],
        ['attention', attention],
        ['unknown', unknown],
      ],
      needsAttention,
    )
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
  const backend = await openState(settings, { env, clock: systemClock, logger });
  const sinks = openSinkSet(sinkTypesByName, { logger, env, reference: referenceReader(env, io.cwd) });
  const now = systemClock.now();
  try {
    const lookup = sinkLookup(policy, sinks);
    const rows = await Promise.all(
      policy.tokens.map(async (token) => {
        try {
          const keys = { sinks, stateKey: settings.stateKey, previousStateKeys: settings.previousStateKeys };
          const [record, entry] = await Promise.all([backend.state.read(token.name), backend.journal.read(token.name)]);
          // Known before the sinks are read: a failing read program may print them.
          learnStateSecrets(record, entry, { current: settings.stateKey, previous: settings.previousStateKeys });
          const read = await snapshotSinks(token, keys);
          const snapshot = await reclaimRecorded(token, keys, read, record);
          const { drift } = assessSinks(snapshot.readings, record?.sinks);
          return { status: tokenStatus(token, record, entry, now, sinks, drift), known: expiryKnown(record) };
        } catch (error) {
          return { status: unreadableStatus(token, error), known: false };
        }
      }),
    );
    rows.push(...(await findStrayEntries(policy, backend.journal)).map((stray) => ({ status: strayStatus(stray), known: false })));
    const policyId = policyIdOf(policy);
    const items = rows.map((r) => statusItem(r.status, r.known, lookup, policyId));
    io.stdout.write(
      options.json
        ? toJson(envelope('Status', statusSummary(items), items))
        : formatStatus(items, terminalWidth(io.stdout)) + summaryLine(items) + skewNote(rows.map((r) => r.status)),
    );
    // Unknown is not healthy: a name never checked has not been shown to work.
    return items.every((i) => i.health === 'ok') ? EXIT.ok : EXIT.failed;
  } finally {
    await sinks.close();
  }
}

import { describeSkew, SKEW_WARNING_MS } from '../../api/service-clock.js';
import { systemClock } from '../../clock.js';
import { formatDuration, parseDuration } from '../../common/duration.js';
import { referenceReader } from '../../common/reference.js';
import { openState } from '../../compose/open-state.js';
import type { Policy } from '../../config/types.js';
import { ConfigError } from '../../errors.js';
import { createLogger, type Logger } from '../../log/logger.js';
import { assessSinks } from '../../policy/sink-drift.js';
import { reclaimRecorded, snapshotSinks } from '../../rotation/assess-token.js';
import { readingsWithoutKey } from '../../rotation/drift-without-key.js';
import { learnStateSecrets } from '../../rotation/state-secrets.js';
import { findStrayEntries } from '../../rotation/stray-entries.js';
import { strayStatus, type TokenStatus, tokenStatus, unreadableStatus } from '../../rotation/token-status.js';
import { type SinkConfig, sinkTypesByName } from '../../sinks/registry.js';
import { openSinkSet, type SinkSet } from '../../sinks/sink-set.js';
import type { StateBackend } from '../../state/state-backend.js';
import { formatTable, terminalWidth } from '../format-table.js';
import { type CliIo, EXIT } from '../io.js';
import { type GlobalOptions, loadRuntime, type Runtime } from '../load-runtime.js';
import { countsLine } from '../output/counts.js';
import { describeDriftItem } from '../output/drift-items.js';
import { envelope, toJson } from '../output/envelope.js';
import { plural, shortDate, showExpiry } from '../output/expiry.js';
import { policyIdOf } from '../output/policy-id.js';
import { type SinkLookup, sinkLookup } from '../output/sink-ref.js';
import { expiryKnown, type StatusItem, statusItem, statusSummary } from '../output/status-items.js';
import { givenNames, unknownNameIssue } from '../token-names.js';
import { everyUntilStopped } from '../watch.js';

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
      showDrift(s),
      s.lastError
        ? `${s.lastError.message}${s.consecutiveFailures ? ` (${s.consecutiveFailures}x${s.backoffUntil ? `, backing off until ${shortDate(s.backoffUntil)}` : ''})` : ''}`
        : '-',
    ]),
    { width, flexible: [6, 7, 8] },
  );
}

/** Drift as found; what could not be compared without the state key is said as not known. */
function showDrift(s: StatusItem): string {
  const found = s.drift.map(describeDriftItem);
  if (!s.driftKnown) found.push(found.length ? 'the other sinks not known without the state key' : 'not known without the state key');
  return found.length ? found.join('; ') : '-';
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
 * Said once under the table when the state was read without ROTATOR_STATE_KEY: what it shows was
 * not authenticated, and drift by content is not known. Neither is a problem of any token.
 */
function unauthenticatedNote(items: StatusItem[]): string {
  if (items.length === 0 || items.some((i) => i.authenticated)) return '';
  const unknown = items.filter((i) => !i.driftKnown).length;
  return (
    '\nstate not authenticated: ROTATOR_STATE_KEY is not set, so the MACs of the state were not checked and its secrets stay sealed' +
    (unknown ? `; whether the sinks hold the current secret is not known for ${plural(unknown, 'token')}` : '') +
    '. Set the key to check both\n'
  );
}

export interface StatusOptions extends GlobalOptions {
  json?: boolean;
  /** Only these names (repeatable, or comma-separated): each of the policy, or a name left in the journal. */
  name?: string[];
  /** Read again and print every so often until SIGINT or SIGTERM: a number of seconds, or a duration. */
  watch?: string;
}

/** What one reading of the state and the sinks found. */
interface StatusReading {
  items: StatusItem[];
  rows: TokenStatus[];
}

interface StatusContext {
  runtime: Runtime;
  backend: StateBackend;
  sinks: SinkSet<SinkConfig>;
  lookup: SinkLookup;
  /** The names to show; undefined: all of them. */
  names: Set<string> | undefined;
}

/** Per token of the policy (and each name left in the journal), from the state and the sinks as they are now. */
async function readStatus(ctx: StatusContext): Promise<StatusReading> {
  const { runtime, backend, sinks, lookup, names } = ctx;
  const { settings, policy } = runtime;
  const authenticated = settings.stateKey !== undefined;
  const now = systemClock.now();
  const rows = await Promise.all(
    policy.tokens
      .filter((token) => names === undefined || names.has(token.name))
      .map(async (token) => {
        try {
          const keys = { sinks, stateKey: settings.stateKey, previousStateKeys: settings.previousStateKeys };
          const [record, entry] = await Promise.all([backend.state.read(token.name), backend.journal.read(token.name)]);
          // Known before the sinks are read: a failing read program may print them.
          learnStateSecrets(record, entry, { current: settings.stateKey, previous: settings.previousStateKeys });
          const read = await snapshotSinks(token, keys);
          const snapshot = await reclaimRecorded(token, keys, read, record);
          // Without the key, a keyed fingerprint cannot be compared with what a sink holds.
          const judged = authenticated ? { readings: snapshot.readings, notCompared: [] } : readingsWithoutKey(snapshot.readings, record);
          const { drift } = assessSinks(judged.readings, record?.sinks);
          return {
            status: tokenStatus(token, record, entry, now, sinks, drift),
            known: expiryKnown(record),
            driftKnown: judged.notCompared.length === 0,
          };
        } catch (error) {
          return { status: unreadableStatus(token, error), known: false, driftKnown: true };
        }
      }),
  );
  const strays = (await findStrayEntries(policy, backend.journal)).filter((stray) => names === undefined || names.has(stray.name));
  rows.push(...strays.map((stray) => ({ status: strayStatus(stray), known: false, driftKnown: true })));
  const policyId = policyIdOf(policy);
  const items = rows.map((r) => statusItem(r.status, r.known, lookup, { authenticated, driftKnown: r.driftKnown }, policyId));
  return { items, rows: rows.map((r) => r.status) };
}

/** The names `--name` gives, each of the policy or of a name left in the journal (exit 2 otherwise). */
async function selectedNames(given: string[] | undefined, policy: Policy, backend: StateBackend): Promise<Set<string> | undefined> {
  const names = givenNames(given);
  if (names.length === 0) return undefined;
  const inPolicy = new Set(policy.tokens.map((t) => t.name));
  // Only a name the policy does not know sends the journal a question.
  const strays = names.some((n) => !inPolicy.has(n)) ? (await findStrayEntries(policy, backend.journal)).map((s) => s.name) : [];
  const known = [...inPolicy, ...strays];
  const issues = names.filter((n) => !known.includes(n)).map((n) => unknownNameIssue(`--name ${n}`, n, known, 'the policy or the journal'));
  if (issues.length > 0) throw new ConfigError(issues);
  return new Set(names);
}

/** `--watch`: a whole number of seconds, or a duration (`30s`, `2m`); at least a second. */
function watchInterval(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = /^\d+$/.test(value.trim()) ? { ok: true as const, ms: Number(value.trim()) * 1000 } : parseDuration(value);
  if (!parsed.ok || parsed.ms < 1000) {
    throw new ConfigError([
      { path: '--watch', message: `${parsed.ok ? 'at least 1 second' : parsed.message}; give seconds (5) or a duration (30s, 2m)` },
    ]);
  }
  return parsed.ms;
}

/** One reading as a table, or (`--json`) as one envelope: indented, or on one line for a watch (NDJSON). */
function render(reading: StatusReading, options: StatusOptions, io: CliIo): string {
  const { items, rows } = reading;
  if (options.json) {
    const document = envelope('Status', statusSummary(items), items);
    return options.watch === undefined ? toJson(document) : `${JSON.stringify(document)}\n`;
  }
  return formatStatus(items, terminalWidth(io.stdout)) + summaryLine(items) + unauthenticatedNote(items) + skewNote(rows);
}

/** Clears a terminal before each table of a watch, and says when it was read; elsewhere, a blank line between tables. */
function watchFrame(table: string, intervalMs: number, io: CliIo, first: boolean): string {
  const header = `every ${formatDuration(intervalMs)}, read ${shortDate(systemClock.now().toISOString())}; Ctrl-C to stop\n\n`;
  return io.stdout.isTTY ? `\x1b[H\x1b[2J${header}${table}` : `${first ? '' : '\n'}${header}${table}`;
}

/**
 * Per token, from the state and the sinks alone (no call to the token service, no state key
 * needed): current id, expiry, last rotation, next due, pending deliveries, drifted sinks, last
 * error. With `--watch`, again and again until stopped.
 */
export async function statusCommand(options: StatusOptions, io: CliIo): Promise<number> {
  const intervalMs = watchInterval(options.watch);
  const runtime = await loadRuntime(options, io);
  const { settings, policy, env } = runtime;
  const logger: Logger = createLogger({ level: settings.logLevel });
  const backend = await openState(settings, { env, clock: systemClock, logger });
  const names = await selectedNames(options.name, policy, backend);
  const sinks = openSinkSet(sinkTypesByName, { logger, env, reference: referenceReader(env, io.cwd) });
  const ctx: StatusContext = { runtime, backend, sinks, lookup: sinkLookup(policy, sinks), names };
  try {
    if (intervalMs !== undefined) {
      let first = true;
      await everyUntilStopped(
        intervalMs,
        async () => {
          const text = render(await readStatus(ctx), options, io);
          io.stdout.write(options.json ? text : watchFrame(text, intervalMs, io, first));
          first = false;
        },
        { logger },
      );
      // Stopped by a signal: the way a watch ends.
      return EXIT.ok;
    }
    const reading = await readStatus(ctx);
    io.stdout.write(render(reading, options, io));
    // Unknown is not healthy: a name never checked has not been shown to work.
    return reading.items.every((i) => i.health === 'ok') ? EXIT.ok : EXIT.failed;
  } finally {
    await sinks.close();
  }
}

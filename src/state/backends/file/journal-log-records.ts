/**
 * The records of the journal log (`journal/journal.log`), one per line: the latest entry of a name,
 * or its erasure. Pure: framing, parsing and which record wins.
 *
 * Each record is written as `\n<json>\n`, in one write. The leading newline ends whatever a torn
 * write (a power loss mid-append) left before it, so the record after a torn one still parses.
 * Text after the last newline is a record not yet complete (another process is writing it, or a
 * torn tail): it is left for the next read. A line that does not parse as a record is torn, and
 * ignored: only writes that were never acknowledged can be torn (see journal-log.ts).
 */
export interface LogRecord {
  name: string;
  /**
   * Orders the records of one name, whichever file they are in and in whatever order they were
   * copied there: the highest wins, and a later one in the same file on a tie. It grows with each
   * write of a name (its holder read the name first, under its lock), so a copy of an older record
   * made by a compaction never hides a newer one.
   */
  seq: number;
  /** The entry as the codec stores it, checked when read (so a damaged one is refused, not dropped). */
  entry?: unknown;
  /** Set on an erasure; then there is no entry. */
  erased?: true;
}

/** One record as it is appended: one write(2), under a page for any journal entry. */
export function frameRecord(record: LogRecord): Buffer {
  return Buffer.from(`\n${JSON.stringify(record)}\n`);
}

/** The records in `bytes` up to its last newline, and how many bytes they took. */
export function parseRecords(bytes: Buffer): { records: LogRecord[]; consumed: number } {
  const end = bytes.lastIndexOf(0x0a);
  if (end < 0) return { records: [], consumed: 0 };
  const records: LogRecord[] = [];
  // Empty lines (every record starts with a newline) parse as nothing, as torn ones do.
  for (const line of bytes.subarray(0, end).toString('utf8').split('\n')) {
    const record = parseLine(line);
    if (record) records.push(record);
  }
  return { records, consumed: end + 1 };
}

function parseLine(line: string): LogRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
    // Stryker disable next-line BlockStatement: without the return, value stays undefined, which the next line refuses the same way
  } catch {
    return undefined; // torn
  }
  // Stryker disable next-line ConditionalExpression: a number or string has no name or seq below either; only null must not be destructured
  if (typeof value !== 'object' || value === null) return undefined;
  const { name, seq, entry, erased } = value as Record<string, unknown>;
  if (typeof name !== 'string' || name === '' || !Number.isSafeInteger(seq)) return undefined;
  if (erased === true) return { name, seq: seq as number, erased };
  if (entry === undefined) return undefined;
  return { name, seq: seq as number, entry };
}

/** Keeps in `latest` the winning record of each name: the highest seq, a later one on a tie. */
export function applyRecords(latest: Map<string, LogRecord>, records: readonly LogRecord[]): void {
  for (const record of records) {
    const current = latest.get(record.name);
    if (!current || record.seq >= current.seq) latest.set(record.name, record);
  }
}

/** The winner of `name` among several files' latest records; undefined when none has one. */
export function winnerOf(name: string, files: Iterable<Map<string, LogRecord>>): LogRecord | undefined {
  let best: LogRecord | undefined;
  for (const latest of files) {
    const record = latest.get(name);
    if (record && (!best || record.seq > best.seq)) best = record;
  }
  return best;
}

/**
 * The next seq of a name: above every seq seen for it, and at least the time in microseconds, so
 * that a name written again after its records were compacted away (none seen) still orders after
 * them. A process never writes a name it did not read first under the name's lock; the time only
 * breaks ties that reading cannot see.
 */
export function nextSeq(seen: number | undefined, nowMs: number): number {
  return Math.max((seen ?? 0) + 1, Math.floor(nowMs * 1000));
}

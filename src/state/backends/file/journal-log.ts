import { closeSync, constants, fdatasync, fstatSync, openSync, readdirSync, readSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';

import { syncFolder } from '../../../fs/folder-sync.js';
import { groupSync } from '../../../fs/group-sync.js';
import { writeAll } from '../../../fs/new-file.js';
import { uniqueHex12 } from '../../../fs/unique-name.js';
import { applyRecords, frameRecord, type LogRecord, parseRecords, winnerOf } from './journal-log-records.js';

export const LOG_NAME = 'journal.log';
/** A log set aside by a compaction: read like the log until the compaction removes it. */
const ASIDE = /^journal\.log\.[0-9a-f]{12}\.old$/;
/** A log this large with entries still live is rewritten with only those. */
const COMPACT_BYTES = 1024 * 1024;
/** What one read(2) of the log asks for: a rotation's records are a few KiB. */
const READ_BYTES = 64 * 1024;

/** A log file this process has open: the descriptor keeps its inode from being reused. */
interface OpenLog {
  fd: number;
  key: string;
  /** How far it was read; what follows is new. */
  offset: number;
  /** The winning record of each name in this file. */
  latest: Map<string, LogRecord>;
  /** fdatasync of this file, shared by concurrent appenders (a group commit). */
  sync: () => Promise<void>;
  /** Syncs asked for and not yet answered: the descriptor is closed only when none is. */
  syncing: number;
  /** The folder was synced since this process first appended to it: its name is durable. */
  named: boolean;
  /** No longer in the folder (or no longer the log): closed once idle. */
  gone: boolean;
  /** Its descriptor was closed: the number may belong to another file now. */
  closed: boolean;
}

/** Takes the folder-wide compaction guard, or tells that another process holds it. */
export type CompactionGuard = () => Promise<{ release(): Promise<void> } | undefined>;

export interface JournalLog {
  /** Reads every log file up to its end, so that `latest` sees what any process appended. */
  refresh(): Promise<void>;
  /** The winning record of `name` as last refreshed (an erasure included). */
  latest(name: string): LogRecord | undefined;
  /** Names whose winning record is an entry, as last refreshed. */
  liveNames(): string[];
  /** Legacy per-name files (`<name>.json`) seen by the last refresh. */
  legacyNames(): ReadonlySet<string>;
  /**
   * Appends `record`. Resolved once it is in the file at the log's path (so no compaction can miss
   * it) and, if `durable`, after an fdatasync that began after the write.
   */
  append(record: LogRecord, durable: boolean): Promise<void>;
  /** Rewrites the log with its live entries only, or removes it when there is none. */
  compact(): Promise<void>;
  /** Compacts when no entry is live or the log has grown large. */
  compactIfDue(): Promise<void>;
}

const code = (error: unknown) => (error as NodeJS.ErrnoException).code;
const keyOf = (stats: { dev: number; ino: number }) => `${stats.dev}:${stats.ino}`;

/**
 * The journal's append-only log, `<folder>/journal.log`, shared by every process on the state
 * folder (a local file system: O_APPEND writes of one record each never interleave).
 *
 * Several processes: a record is acknowledged only once `stat(path)` names the inode it was written
 * to, after the write; else it is written again to the file now at the path (records are
 * idempotent, and seq orders them). A compaction (under the folder's guard) renames the log aside
 * first, reads the aside file to its end, appends the live entries to the path and syncs them, and
 * only then removes the aside file: whatever was acknowledged before the rename is in the aside
 * file it reads, whatever was written after is written again by its writer. A reader reads the
 * aside files too, and reads again until no compaction moved anything under it.
 */
export function journalLog(folder: string, guard: CompactionGuard): JournalLog {
  const path = join(folder, LOG_NAME);
  /** Every log file open here, by inode. */
  const files = new Map<string, OpenLog>();
  /** The inode at the path as last seen, if any. */
  let current: OpenLog | undefined;
  let legacy = new Set<string>();
  let compacting: Promise<void> | undefined;

  function track(fd: number): OpenLog {
    const key = keyOf(fstatSync(fd));
    const known = files.get(key);
    if (known) {
      closeSync(fd);
      return known;
    }
    const log: OpenLog = {
      fd,
      key,
      offset: 0,
      latest: new Map(),
      syncing: 0,
      named: false,
      gone: false,
      closed: false,
      // Fails for good: after a failed writeback, a later fdatasync of this descriptor succeeds.
      sync: groupSync(
        () => new Promise<void>((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve()))),
        undefined,
        { failForGood: true },
      ),
    };
    files.set(key, log);
    return log;
  }

  function close(log: OpenLog): void {
    log.gone = true;
    if (log.syncing > 0 || log.closed) return;
    log.closed = true;
    // A log retired after a failed sync shares its key with the fresh descriptor of the same file.
    if (files.get(log.key) === log) files.delete(log.key);
    closeSync(log.fd);
  }

  /**
   * After a failed fdatasync: nothing written through this descriptor is acknowledged any more (its
   * writers got the error and write again), and the next append opens the log afresh.
   */
  function retire(log: OpenLog): void {
    if (files.get(log.key) === log) files.delete(log.key);
    log.gone = true;
  }

  /** Reads `log` from where it was read to its end: read(2) until it returns nothing, no stat. */
  function readNew(log: OpenLog): void {
    const chunks: Buffer[] = [];
    let at = log.offset;
    for (;;) {
      const chunk = Buffer.allocUnsafe(READ_BYTES);
      const n = readSync(log.fd, chunk, 0, READ_BYTES, at);
      if (n === 0) break;
      chunks.push(chunk.subarray(0, n));
      at += n;
    }
    if (chunks.length === 0) return;
    const { records, consumed } = parseRecords(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    applyRecords(log.latest, records);
    log.offset += consumed;
  }

  /** The inode at the path now, opened when new; undefined when there is no log. */
  function atPath(create: boolean): OpenLog | undefined {
    let key: string;
    try {
      key = keyOf(statSync(path));
    } catch (error) {
      if (code(error) !== 'ENOENT' || !create) {
        if (code(error) === 'ENOENT') return setCurrent(undefined);
        throw error;
      }
      key = '';
    }
    const known = files.get(key);
    if (known && !known.gone) return setCurrent(known);
    let fd: number;
    try {
      fd = openSync(path, constants.O_RDWR | constants.O_APPEND | (create ? constants.O_CREAT : 0), 0o600);
    } catch (error) {
      if (code(error) === 'ENOENT' && !create) return setCurrent(undefined);
      throw error;
    }
    return setCurrent(track(fd));
  }

  function setCurrent(log: OpenLog | undefined): OpenLog | undefined {
    if (current && current !== log) current.gone ||= !asideKeys.has(current.key);
    current = log;
    if (log) log.gone = false;
    return log;
  }

  /** Inodes of aside files seen in the last listing. */
  let asideKeys = new Set<string>();

  function list(): { asides: string[]; legacy: Set<string> } {
    let entries: string[];
    try {
      entries = readdirSync(folder);
    } catch (error) {
      if (code(error) === 'ENOENT') return { asides: [], legacy: new Set() };
      throw error;
    }
    return {
      asides: entries.filter((e) => ASIDE.test(e)),
      legacy: new Set(entries.filter((f) => f.endsWith('.json') && !f.startsWith('.')).map((f) => f.slice(0, -'.json'.length))),
    };
  }

  /** The inodes of the aside files read; undefined when one listed was gone (see refresh). */
  function readAsides(asides: readonly string[]): Set<string> | undefined {
    const keys = new Set<string>();
    for (const aside of asides) {
      let fd: number;
      try {
        fd = openSync(join(folder, aside), constants.O_RDONLY);
      } catch (error) {
        if (code(error) === 'ENOENT') return undefined; // removed by its compaction meanwhile
        throw error;
      }
      const log = track(fd);
      log.gone = false;
      readNew(log);
      keys.add(log.key);
    }
    return keys;
  }

  /**
   * Reads the log, then the aside files, then the log again to its end, until the log at the path
   * stayed the same inode throughout. A record that was in the log when this began is then read:
   * in the log, or in the aside file a compaction renamed it to, or (that file removed already)
   * in the copy the compaction appended to the log before removing it, read by the last step.
   */
  async function refresh(): Promise<void> {
    // The log as last seen needs no stat: the stat below tells whether it still is.
    let before = current && !current.gone ? current : atPath(false);
    for (; ; before = atPath(false)) {
      if (before) readNew(before);
      const listed = list();
      const keys = readAsides(listed.asides);
      // An aside file that vanished may have held an erasure that hides an older file's record,
      // read already: the compaction that removed it is done, so the next listing shows neither.
      if (!keys) continue;
      const after = atPath(false);
      if (after !== before) continue;
      if (after) readNew(after);
      asideKeys = keys;
      legacy = listed.legacy;
      for (const log of [...files.values()]) if (log !== after && !keys.has(log.key)) close(log);
      return;
    }
  }

  const present = () => [...files.values()].filter((log) => !log.gone).map((log) => log.latest);

  async function appendOnce(bytes: Buffer, durable: boolean): Promise<void> {
    for (;;) {
      // The log as last seen; the stat after the write tells whether it still is.
      const log = current && !current.gone ? current : atPath(true)!;
      writeAll(log.fd, bytes);
      // Still the log after the write: a compaction renames it aside only after this, and then reads
      // this record there. Otherwise the record is written again, to the log now at the path.
      if (atPath(false) !== log) continue;
      if (!durable) return;
      log.syncing += 1;
      try {
        await log.sync().catch((error: unknown) => {
          retire(log);
          throw error;
        });
        if (!log.named) {
          await syncFolder(folder);
          log.named = true;
        }
      } finally {
        log.syncing -= 1;
        if (log.gone) close(log);
      }
      return;
    }
  }

  async function compactNow(): Promise<void> {
    const held = await guard();
    if (!held) return;
    try {
      const { asides } = list();
      let aside: string | undefined = join(folder, `${LOG_NAME}.${uniqueHex12()}.old`);
      try {
        renameSync(path, aside);
      } catch (error) {
        if (code(error) !== 'ENOENT') throw error;
        aside = undefined;
      }
      atPath(false); // whatever is at the path now, not the file just set aside, takes the copies
      const moved = [...asides.map((a) => join(folder, a)), ...(aside ? [aside] : [])];
      // Read from the start, not from this process's view: records of files removed since are gone.
      const latest = new Map<string, LogRecord>();
      const opened: OpenLog[] = [];
      for (const file of moved) {
        let fd: number;
        try {
          fd = openSync(file, constants.O_RDONLY);
        } catch (error) {
          if (code(error) === 'ENOENT') continue;
          throw error;
        }
        const log = track(fd);
        readNew(log);
        opened.push(log);
        applyRecords(latest, [...log.latest.values()]);
      }
      const live = [...latest.values()].filter((r) => !r.erased);
      if (live.length > 0) {
        const bytes = Buffer.concat(live.map(frameRecord));
        await appendOnce(bytes, true);
      }
      const older = moved.filter((f) => f !== aside);
      for (const file of older) unlinkIfThere(file);
      // An older aside file may hold what an erasure in the newer one hides: it goes first, for good.
      if (older.length > 0 && aside) await syncFolder(folder);
      if (aside) unlinkIfThere(aside);
      for (const log of opened) close(log);
    } finally {
      await held.release();
    }
  }

  function unlinkIfThere(file: string): void {
    try {
      unlinkSync(file);
    } catch (error) {
      if (code(error) !== 'ENOENT') throw error;
    }
  }

  async function compact(): Promise<void> {
    compacting ??= compactNow().finally(() => {
      compacting = undefined;
    });
    return compacting;
  }

  /** On this process's view, without a stat: a compaction that was not due is merely wasted work. */
  async function compactIfDue(): Promise<void> {
    const log = current && !current.gone ? current : undefined;
    if (log) readNew(log);
    if (asideKeys.size > 0 || (log && (liveNames().length === 0 || log.offset > COMPACT_BYTES))) await compact();
  }

  function liveNames(): string[] {
    const names = new Set<string>();
    for (const latest of present()) for (const name of latest.keys()) names.add(name);
    return [...names].filter((name) => !winnerOf(name, present())?.erased);
  }

  return {
    refresh,
    latest: (name) => winnerOf(name, present()),
    liveNames,
    legacyNames: () => legacy,
    append: (record, durable) => appendOnce(frameRecord(record), durable),
    compact,
    compactIfDue,
  };
}

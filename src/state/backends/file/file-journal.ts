import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { type Clock, systemClock } from '../../../clock.js';
import { StateError } from '../../../errors.js';
import { removeCrashLeftovers } from '../../../fs/atomic-write.js';
import { makeFolders } from '../../../fs/make-folders.js';
import type { Journal } from '../../journal.js';
import { JOURNAL_VERSION, type JournalEntry, journalEntrySchema } from '../../journal-entry.js';
import { decodeRecord, type RecordKind } from '../../record-codec.js';
import { fileNameLocks } from './file-locks.js';
import { journalLog, LOG_NAME } from './journal-log.js';
import { type LogRecord, nextSeq } from './journal-log-records.js';
import { readRecordFile, removeRecordFile, writeRecordFile } from './record-file.js';

const kind: RecordKind<JournalEntry> = { what: 'journal entry', version: JOURNAL_VERSION, schema: journalEntrySchema };

/** The lock name of the journal's compaction guard: a name no token can have (names never start with a dot). */
export const COMPACTION_GUARD = '.journal-compaction';

/**
 * The journal of the file backend: one append-only log, `<dir>/journal/journal.log` (0600 in a 0700
 * folder), that every process on the state folder appends to (see journal-log.ts). Entries written
 * by earlier versions, one file per name (`journal/<name>.json`), are still read, and while one is
 * there its name keeps being written to it, so such an entry behaves exactly as it always did.
 */
export function fileJournal(dir: string, options: { clock?: Clock } = {}): Journal {
  const folder = join(dir, 'journal');
  const fileOf = (name: string) => join(folder, `${name}.json`);
  const logOf = (name: string) => `${join(folder, LOG_NAME)} (entry for '${name}')`;
  const guards = fileNameLocks(dir, { clock: options.clock ?? systemClock });
  const log = journalLog(folder, async () => {
    const result = await guards.acquire(COMPACTION_GUARD, { waitMs: 0 });
    return 'held' in result ? result.held : undefined;
  });
  /** The highest seq this process saw of each name: its next write goes above it. */
  const seen = new Map<string, number>();
  /** Whether this process's last write of a name was an entry (true) or its erasure (false). */
  const wrote = new Map<string, boolean>();
  let folderMade: Promise<void> | undefined;

  const fix = (name: string, where: string) =>
    `it may hold the only copy of a new secret for '${name}'. Inspect it; if it holds a "staged" secret, ` +
    `put that secret where it belongs by hand. Then ${where} to let '${name}' rotate again`;

  const fail = (what: string, name: string, error: unknown): never => {
    throw new StateError(`cannot ${what} journal entry ${logOf(name)}: ${(error as NodeJS.ErrnoException).code ?? error}`, {
      cause: error,
    });
  };

  /** Names read here: the folder was listed then, under the name's lock, so its legacy file is known. */
  const readHere = new Set<string>();
  /** Legacy: a per-name file exists for `name` (as the read before saw it, or now if it was not read here). */
  const isLegacy = (name: string) => log.legacyNames().has(name) || (!readHere.has(name) && existsSync(fileOf(name)));

  /** The log holds an entry for `name`, as the last refresh saw. */
  const isLive = (name: string) => {
    const latest = log.latest(name);
    return latest !== undefined && !latest.erased;
  };

  async function append(name: string, record: Omit<LogRecord, 'name' | 'seq'>, durable: boolean, what: string): Promise<void> {
    const seq = nextSeq(seen.get(name) ?? log.latest(name)?.seq, Date.now());
    try {
      folderMade ??= makeFolders(folder, 0o700).catch((error: unknown) => {
        folderMade = undefined;
        throw error;
      });
      await folderMade;
      await log.append({ name, seq, ...record }, durable);
    } catch (error) {
      folderMade = undefined;
      fail(what, name, error);
    }
    seen.set(name, seq);
    wrote.set(name, !record.erased);
  }

  async function refresh(): Promise<void> {
    try {
      await log.refresh();
    } catch (error) {
      throw new StateError(`cannot read the journal ${join(folder, LOG_NAME)}: ${(error as NodeJS.ErrnoException).code ?? error}`);
    }
  }

  return {
    describe: (name) => (existsSync(fileOf(name)) ? fileOf(name) : logOf(name)),

    // The entry may hold the only copy of a new secret: never drop it, say what to look at.
    async read(name) {
      await refresh();
      readHere.add(name);
      if (log.legacyNames().has(name)) {
        const entry = await readRecordFile(fileOf(name), name, kind, fix(name, 'move the file aside'));
        // A held write killed between its file and the erasure leaves both: the file wins, and the
        // log's older record goes now (under the name's lock), or removing the file by hand, as the
        // operator is told to, would bring it back.
        if (isLive(name)) await append(name, { erased: true }, true, 'write');
        return entry;
      }
      const record = log.latest(name);
      wrote.delete(name);
      if (record) seen.set(name, Math.max(seen.get(name) ?? 0, record.seq));
      if (!record || record.erased) return undefined;
      return decodeRecord(JSON.stringify(record.entry), name, kind, logOf(name), fix(name, `run 'token-rotator state forget ${name}'`));
    },

    async write(entry, { durable = true } = {}) {
      const { name } = entry;
      if (entry.phase === 'held' && !isLegacy(name)) {
        // A held secret waits for an operator, who is told to look at journal/<name>.json and remove
        // it once dealt with: it gets a file of its own, and the log forgets the name once it is there.
        await writeRecordFile(fileOf(name), entry, kind.what);
        if (wrote.get(name) ?? isLive(name)) await append(name, { erased: true }, true, 'write');
        return;
      }
      if (isLegacy(name)) return writeRecordFile(fileOf(name), entry, kind.what);
      await append(name, { entry }, durable, 'write');
    },

    removeLeftovers: (name) => removeCrashLeftovers(fileOf(name)),

    async erase(name, { durable = true } = {}) {
      // Neither read nor written here: whether the log holds it is known only by reading it (which
      // fails, as the file did, when the journal cannot be read), never assumed from nothing read.
      if (!readHere.has(name) && !wrote.has(name)) await refresh();
      // Erased from both, when a legacy file appeared beside a log entry (planted by hand).
      if (isLegacy(name)) await removeRecordFile(fileOf(name), kind.what);
      if (wrote.get(name) ?? isLive(name)) await append(name, { erased: true }, durable, 'erase');
      await log.compactIfDue().catch(() => undefined);
    },

    async names() {
      await refresh();
      // Once a run: what a killed run left set aside is merged here, and an empty log removed.
      await log.compactIfDue().catch(() => undefined);
      await refresh();
      return [...new Set([...log.legacyNames(), ...log.liveNames()])];
    },
  };
}

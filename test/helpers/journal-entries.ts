import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { fileJournal } from '../../src/state/backends/file/file-journal.js';
import { journalLog } from '../../src/state/backends/file/journal-log.js';
import { type IntentEntry, JOURNAL_VERSION, type JournalEntry } from '../../src/state/journal-entry.js';
import { encodeRecord } from '../../src/state/record-codec.js';

/**
 * What the file backend's journal holds, read as the product reads it (the log and any legacy
 * per-name file), for tests that look at the journal a killed run left. `stateDir` is the state
 * folder (`<fixture>/state`). Reading changes nothing: no compaction, no lock.
 */
export async function journalEntry(stateDir: string, name: string): Promise<JournalEntry | undefined> {
  return fileJournal(stateDir).read(name);
}

/** Names with a live entry, sorted. */
export async function journalNames(stateDir: string): Promise<string[]> {
  const log = journalLog(join(stateDir, 'journal'), async () => undefined);
  await log.refresh();
  return [...new Set([...log.legacyNames(), ...log.liveNames()])].sort();
}

/** Puts `entry` where an earlier version kept it, `journal/<name>.json`: it wins over the log. */
export async function putLegacyEntry(stateDir: string, entry: JournalEntry): Promise<void> {
  await mkdir(join(stateDir, 'journal'), { recursive: true, mode: 0o700 });
  await writeFile(join(stateDir, 'journal', `${entry.name}.json`), encodeRecord(entry), { mode: 0o600 });
}

/** An intent entry of `name`, for tests of the journal itself. */
export function anIntent(name: string, over: Partial<IntentEntry> = {}): IntentEntry {
  return {
    version: JOURNAL_VERSION,
    name,
    rotationId: 'rotation-1',
    phase: 'intent',
    reason: 'due',
    startedAt: '2026-11-22T12:00:00.000Z',
    oldId: 'tok-1',
    oldExpiresAt: null,
    existingTokenExpiresAt: '2026-11-22T13:00:00.000Z',
    newTokenExpiresAt: null,
    delivered: [],
    ...over,
  };
}

import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

import { removeCrashLeftovers } from '../../../fs/atomic-write.js';
import type { Journal } from '../../journal.js';
import { JOURNAL_VERSION, type JournalEntry, journalEntrySchema } from '../../journal-entry.js';
import type { RecordKind } from '../../record-codec.js';
import { readRecordFile, removeRecordFile, writeRecordFile } from './record-file.js';

const kind: RecordKind<JournalEntry> = { what: 'journal entry', version: JOURNAL_VERSION, schema: journalEntrySchema };

/** `<dir>/journal/<name>.json`, 0600 in 0700 folders, written atomically and fsync'd (file and folder). */
export function fileJournal(dir: string): Journal {
  const folder = join(dir, 'journal');
  const fileOf = (name: string) => join(folder, `${name}.json`);

  return {
    describe: fileOf,

    // The entry may hold the only copy of a new secret: never drop it, say what to look at.
    read: (name) =>
      readRecordFile(
        fileOf(name),
        name,
        kind,
        `it may hold the only copy of a new secret for '${name}'. Inspect it; if it holds a "staged" secret, ` +
          `put that secret where it belongs by hand. Then move the file aside to let '${name}' rotate again`,
      ),

    write: (entry) => writeRecordFile(fileOf(entry.name), entry, kind.what),

    removeLeftovers: (name) => removeCrashLeftovers(fileOf(name)),

    // Durable too: a resurrected entry would deliver an old secret again.
    erase: (name) => removeRecordFile(fileOf(name), kind.what),

    async names() {
      const files = await readdir(folder).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return [] as string[];
        throw error;
      });
      return files.filter((f) => f.endsWith('.json') && !f.startsWith('.')).map((f) => f.slice(0, -'.json'.length));
    },
  };
}

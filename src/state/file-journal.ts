import { open, readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { fromZodIssues } from '../config/issues.js';
import { StateError } from '../errors.js';
import { writeFileAtomic } from '../fs/atomic-write.js';
import { journalEntrySchema, JOURNAL_VERSION } from './journal-entry.js';
import type { Journal } from './journal.js';

/** `<dir>/journal/<name>.json`, 0600 in 0700 folders, written atomically and fsync'd (file and folder). */
export function fileJournal(dir: string): Journal {
  const folder = join(dir, 'journal');
  const fileOf = (name: string) => join(folder, `${name}.json`);

  return {
    describe: fileOf,

    async read(name) {
      const file = fileOf(name);
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw new StateError(`cannot read journal entry ${file}: ${(error as NodeJS.ErrnoException).code}`);
      }
      // The entry may hold the only copy of a new secret: never drop it, say what to look at.
      const fix =
        `it may hold the only copy of a new secret for '${name}'. Inspect it; if it holds a "staged" secret, ` +
        `put that secret where it belongs by hand. Then move the file aside to let '${name}' rotate again`;
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw new StateError(`journal entry ${file} is not valid JSON (truncated or damaged); ${fix}`);
      }
      const version = (json as { version?: unknown })?.version;
      if (version !== JOURNAL_VERSION) {
        throw new StateError(`journal entry ${file} has version ${JSON.stringify(version)}; this token-rotator reads version ${JOURNAL_VERSION}; ${fix}`);
      }
      const parsed = journalEntrySchema.safeParse(json, { reportInput: true });
      if (!parsed.success) {
        const problems = fromZodIssues(parsed.error.issues).map((i) => `${i.path}: ${i.message}`).join('; ');
        throw new StateError(`journal entry ${file} is damaged (${problems}); ${fix}`);
      }
      if (parsed.data.name !== name) throw new StateError(`journal entry ${file} belongs to '${parsed.data.name}'; ${fix}`);
      return parsed.data;
    },

    async write(entry) {
      const file = fileOf(entry.name);
      try {
        await writeFileAtomic(file, `${JSON.stringify(entry, null, 2)}\n`, { mode: 0o600, dirMode: 0o700 });
      } catch (error) {
        throw new StateError(`cannot write journal entry ${file}: ${(error as NodeJS.ErrnoException).code ?? error}`, { cause: error });
      }
    },

    async erase(name) {
      try {
        await unlink(fileOf(name));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw new StateError(`cannot erase journal entry ${fileOf(name)}: ${(error as NodeJS.ErrnoException).code}`);
      }
      // Make the erasure durable too: a resurrected entry would deliver an old secret again.
      const handle = await open(folder, 'r');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
    },

    async names() {
      const files = await readdir(folder).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return [] as string[];
        throw error;
      });
      return files.filter((f) => f.endsWith('.json') && !f.startsWith('.')).map((f) => f.slice(0, -'.json'.length));
    },
  };
}

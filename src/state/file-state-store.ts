import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StateError } from '../errors.js';
import { fromZodIssues } from '../config/issues.js';
import { writeFileAtomic } from '../fs/atomic-write.js';
import { stateRecordSchema, STATE_VERSION, type StateRecord } from './state-record.js';
import type { StateStore } from './state-store.js';

/**
 * One JSON file per name under `<dir>/tokens/`, 0600 in 0700 folders, each written atomically.
 * Token names are restricted by the policy schema to characters that are safe as file names.
 */
export function fileStateStore(dir: string): StateStore {
  const fileOf = (name: string) => join(dir, 'tokens', `${name}.json`);

  return {
    describe: () => dir,

    async read(name) {
      const file = fileOf(name);
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw new StateError(`cannot read state file ${file}: ${(error as NodeJS.ErrnoException).code}`);
      }
      // A damaged record must stop the run for this name: silently starting over would forget the
      // current id and make the next run regenerate from a token that no longer exists.
      const fix = `restore it from a backup, or move it aside to adopt '${name}' again from the policy's id`;
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw new StateError(`state file ${file} is not valid JSON (truncated or damaged); ${fix}`);
      }
      const version = (json as { version?: unknown })?.version;
      if (version !== STATE_VERSION) {
        throw new StateError(`state file ${file} has version ${JSON.stringify(version)}; this token-rotator reads version ${STATE_VERSION}; ${fix}`);
      }
      const parsed = stateRecordSchema.safeParse(json, { reportInput: true });
      if (!parsed.success) {
        const problems = fromZodIssues(parsed.error.issues).map((i) => `${i.path}: ${i.message}`).join('; ');
        throw new StateError(`state file ${file} is damaged (${problems}); ${fix}`);
      }
      if (parsed.data.name !== name) throw new StateError(`state file ${file} belongs to '${parsed.data.name}'; ${fix}`);
      return parsed.data;
    },

    async write(record) {
      const file = fileOf(record.name);
      try {
        await writeFileAtomic(file, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600, dirMode: 0o700 });
      } catch (error) {
        throw new StateError(`cannot write state file ${file}: ${(error as NodeJS.ErrnoException).code ?? error}`, { cause: error });
      }
    },
  };
}

import { readFile } from 'node:fs/promises';

import type { z } from 'zod';

import { fromZodIssues } from '../common/config-issues.js';
import { StateError } from '../errors.js';
import { writeFileAtomic } from '../fs/atomic-write.js';

export interface RecordFileKind<T> {
  /** `state file`, `journal entry`: how messages name it. */
  what: string;
  version: number;
  schema: z.ZodType<T>;
}

/**
 * One versioned JSON record for one name, read strictly: a damaged, foreign or newer file stops
 * with its path and `fix`, never a silent reset. Undefined when there is no file.
 */
export async function readRecordFile<T extends { name: string }>(
  file: string,
  name: string,
  kind: RecordFileKind<T>,
  fix: string,
): Promise<T | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new StateError(`cannot read ${kind.what} ${file}: ${(error as NodeJS.ErrnoException).code}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new StateError(`${kind.what} ${file} is not valid JSON (truncated or damaged); ${fix}`);
  }
  const version = (json as { version?: unknown })?.version;
  if (version !== kind.version) {
    throw new StateError(
      `${kind.what} ${file} has version ${JSON.stringify(version)}; this token-rotator reads version ${kind.version}; ${fix}`,
    );
  }
  const parsed = kind.schema.safeParse(json, { reportInput: true });
  if (!parsed.success) {
    const problems = fromZodIssues(parsed.error.issues)
      .map((i) => `${i.path}: ${i.message}`)
      .join('; ');
    throw new StateError(`${kind.what} ${file} is damaged (${problems}); ${fix}`);
  }
  if (parsed.data.name !== name) throw new StateError(`${kind.what} ${file} belongs to '${parsed.data.name}'; ${fix}`);
  return parsed.data;
}

/** Atomic, fsync'd, 0600 in 0700 folders. */
export async function writeRecordFile(file: string, value: unknown, what: string): Promise<void> {
  try {
    await writeFileAtomic(file, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600, dirMode: 0o700 });
  } catch (error) {
    throw new StateError(`cannot write ${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? error}`, { cause: error });
  }
}

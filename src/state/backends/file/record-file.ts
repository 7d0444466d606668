import { unlink } from 'node:fs/promises';
import { dirname } from 'node:path';

import { StateError } from '../../../errors.js';
import { removeCrashLeftovers, writeFileAtomic } from '../../../fs/atomic-write.js';
import { syncFolder } from '../../../fs/folder-sync.js';
import { readFileNowIfExists } from '../../../fs/read-file-now.js';
import { decodeRecord, encodeRecord, type RecordKind } from '../../record-codec.js';

/** One record per file, decoded by the codec every backend shares. Undefined when there is no file. */
export async function readRecordFile<T extends { name: string }>(
  file: string,
  name: string,
  kind: RecordKind<T>,
  fix: string,
): Promise<T | undefined> {
  let text: string | undefined;
  try {
    // Stryker disable next-line StringLiteral: without an encoding the file is read as a Buffer, which JSON.parse reads as the same UTF-8 text
    text = readFileNowIfExists(file, 'utf8');
  } catch (error) {
    throw new StateError(`cannot read ${kind.what} ${file}: ${(error as NodeJS.ErrnoException).code}`);
  }
  return text === undefined ? undefined : decodeRecord(text, name, kind, file, fix);
}

/** Atomic, fsync'd, 0600 in 0700 folders. */
export async function writeRecordFile(file: string, value: unknown, what: string): Promise<void> {
  try {
    await writeFileAtomic(file, encodeRecord(value), { mode: 0o600, dirMode: 0o700 });
  } catch (error) {
    throw new StateError(`cannot write ${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? error}`, { cause: error });
  }
}

/**
 * Removes a record's file and what a crashed write left beside it (it may hold a secret); none is
 * fine. The removal is made durable: a resurrected file would bring an old secret or id back.
 */
export async function removeRecordFile(file: string, what: string): Promise<void> {
  await removeCrashLeftovers(file);
  try {
    await unlink(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new StateError(`cannot erase ${what} ${file}: ${(error as NodeJS.ErrnoException).code}`);
  }
  await syncFolder(dirname(file));
}

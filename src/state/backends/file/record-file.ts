import { StateError } from '../../../errors.js';
import { writeFileAtomic } from '../../../fs/atomic-write.js';
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

import { closeSync, constants, fstatSync, openSync, readFileSync, statSync } from 'node:fs';

/**
 * Reads a small regular file synchronously: a state record, a journal entry, a secret file. The
 * thread pool's round trips (four for a readFile) cost many times the read itself. Opened without
 * blocking, so that a FIFO put where a file belongs cannot hang the process: anything but a regular
 * file is refused with EISDIR (a folder) or EINVAL.
 */
export function readFileNow(path: string): Buffer;
export function readFileNow(path: string, encoding: 'utf8'): string;
export function readFileNow(path: string, encoding?: 'utf8'): Buffer | string {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) {
      const code = stats.isDirectory() ? 'EISDIR' : 'EINVAL';
      throw Object.assign(new Error(`${code}: not a regular file, read '${path}'`), { code, path, syscall: 'read' });
    }
    return encoding ? readFileSync(fd, encoding) : readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * As `readFileNow`, undefined when there is no file. A missing file is looked for with a stat that
 * does not throw: an ENOENT thrown and caught costs more than the read (a journal entry is missing
 * for almost every name on almost every run).
 */
export function readFileNowIfExists(path: string, encoding: 'utf8'): string | undefined {
  if (!statSync(path, { throwIfNoEntry: false })) return undefined;
  try {
    return readFileNow(path, encoding);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined; // removed in between
    throw error;
  }
}

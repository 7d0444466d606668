import { randomBytes } from 'node:crypto';
import { lstat, open, readdir, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

import { folderModeFor, makeFolders } from './make-folders.js';

export type WriteResult = 'created' | 'updated' | 'unchanged';

export class RefusedWriteError extends Error {
  readonly code = 'EREFUSED';
}

/**
 * Writes `data` to `target` so that a reader sees either the old content or the new, never a part:
 * a temporary file in the same folder, fsync, rename, fsync of the folder. Missing folders are
 * created with exactly `dirMode`, by default the narrowest that lets whoever may read the file reach
 * it (see `folderModeFor`); existing folders are not touched. A symlink or anything but a regular
 * file at `target` is refused, so the write cannot be redirected to a file someone else chose.
 *
 * Writes to one target must not overlap (ours are serialised by the name lock): any temporary file
 * of the target found here is then a leftover of a crashed write, and is removed, since it may hold
 * a secret.
 */
export async function writeFileAtomic(
  target: string,
  data: string | Buffer,
  options: { mode: number; dirMode?: number },
): Promise<WriteResult> {
  const dir = dirname(target);
  await makeFolders(dir, options.dirMode ?? folderModeFor(options.mode));
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  await removeCrashLeftovers(target);

  const existing = await lstat(target).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (existing?.isSymbolicLink()) throw new RefusedWriteError(`${target} is a symbolic link; refusing to write through it`);
  if (existing && !existing.isFile()) throw new RefusedWriteError(`${target} exists and is not a regular file`);
  if (existing && (existing.mode & 0o777) === options.mode && existing.size === bytes.length) {
    const current = await readFile(target);
    if (current.equals(bytes)) return 'unchanged';
  }

  const temporary = join(dir, `${temporaryPrefix(target)}${randomBytes(6).toString('hex')}.tmp`);
  try {
    const handle = await open(temporary, 'wx', options.mode);
    try {
      await handle.chmod(options.mode); // open's mode is narrowed by the umask
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, target);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
  await syncDirectory(dir);
  return existing ? 'updated' : 'created';
}

const temporaryPrefix = (target: string) => `.${basename(target)}.`;

/** Removes temporary files that a crashed write of `target` left beside it. */
export async function removeCrashLeftovers(target: string): Promise<void> {
  const prefix = temporaryPrefix(target);
  const siblings = await readdir(dirname(target)).catch(() => [] as string[]);
  await Promise.all(
    siblings
      .filter((f) => f.startsWith(prefix) && /^[0-9a-f]{12}\.tmp$/.test(f.slice(prefix.length)))
      .map((f) => unlink(join(dirname(target), f)).catch(() => undefined)),
  );
}

/** Makes the rename itself durable: without it a crash can bring back the old directory entry. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

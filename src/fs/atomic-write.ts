import { closeSync, fchmodSync, lstatSync } from 'node:fs';
import { readdir, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

import { fsyncFile, syncFolder } from './folder-sync.js';
import { folderModeFor, makeFolders } from './make-folders.js';
import { openExclusive, writeAll } from './new-file.js';
import { readFileNow } from './read-file-now.js';
import { uniqueHex12 } from './unique-name.js';

export type WriteResult = 'created' | 'updated' | 'unchanged';

export class RefusedWriteError extends Error {
  readonly code = 'EREFUSED';
}

/**
 * Folders this process made or found, so that a write does not look at every ancestor again: a
 * folder removed meanwhile makes the write fail with ENOENT, and it is then made again.
 */
const knownFolders = new Set<string>();

async function ensureFolders(dir: string, mode: number): Promise<void> {
  if (knownFolders.has(dir)) return;
  await makeFolders(dir, mode);
  knownFolders.add(dir);
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
 *
 * The folder's fsync is shared by writes that rename into one folder at the same time (a group
 * commit): each write returns only after an fsync of the folder that began after its own rename.
 *
 * Steps that change a folder (creating the temporary file, the rename) and the fsyncs, which wait
 * for the disk's journal, run on libuv's thread pool. The others (lstat, a read of the current
 * content, chmod, write and close of the new file) take microseconds and are made synchronously: a
 * round trip through the thread pool costs this thread more (30 to 120 µs) than such a call.
 */
export async function writeFileAtomic(
  target: string,
  data: string | Buffer,
  options: { mode: number; dirMode?: number },
): Promise<WriteResult> {
  const dir = dirname(target);
  const dirMode = options.dirMode ?? folderModeFor(options.mode);
  await ensureFolders(dir, dirMode);
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  await removeCrashLeftovers(target);

  const existing = lstatOrUndefined(target);
  if (existing?.isSymbolicLink()) throw new RefusedWriteError(`${target} is a symbolic link; refusing to write through it`);
  if (existing && !existing.isFile()) throw new RefusedWriteError(`${target} exists and is not a regular file`);
  if (existing && (existing.mode & 0o777) === options.mode && existing.size === bytes.length) {
    if (readFileNow(target).equals(bytes)) return 'unchanged';
  }

  const temporary = join(dir, `${temporaryPrefix(target)}${uniqueHex12()}.tmp`);
  try {
    let fd: number;
    try {
      fd = await openExclusive(temporary, options.mode);
    } catch (error) {
      // The folder went away since this process last wrote into it: make it again, once.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || !knownFolders.delete(dir)) throw error;
      await ensureFolders(dir, dirMode);
      fd = await openExclusive(temporary, options.mode);
    }
    try {
      fchmodSync(fd, options.mode); // open's mode is narrowed by the umask
      writeAll(fd, bytes);
      await fsyncFile(fd);
    } finally {
      closeSync(fd);
    }
    await rename(temporary, target);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
  await syncFolder(dir);
  return existing ? 'updated' : 'created';
}

function lstatOrUndefined(path: string) {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

const temporaryPrefix = (target: string) => `.${basename(target)}.`;
const TEMPORARY = /^\.(.+)\.[0-9a-f]{12}\.tmp$/;

/**
 * The temporary files found in each folder, by the target they belong to. A folder is listed once,
 * not at every write: listing a folder of n secrets for each of n writes made a run quadratic. A
 * listing is trusted for `LISTING_TTL_MS` at most, and forgotten at once when a lock of a crashed
 * holder is taken over (`forgetCrashLeftoverListings`): a crash of a writer always leaves its lock
 * behind, so a leftover newer than the listing is only ever found by the one that takes it over.
 */
const listings = new Map<string, { at: number; leftovers: Promise<Map<string, string[]>> }>();
const LISTING_TTL_MS = 10_000;

function leftoversIn(dir: string): Promise<Map<string, string[]>> {
  // Monotonic: a clock set back must not make a listing trusted for longer.
  const now = performance.now();
  const cached = listings.get(dir);
  if (cached && now - cached.at < LISTING_TTL_MS) return cached.leftovers;
  const leftovers = readdir(dir)
    .catch(() => [] as string[])
    .then((names) => {
      const byTarget = new Map<string, string[]>();
      for (const name of names) {
        const match = TEMPORARY.exec(name);
        if (!match) continue;
        const target = match[1]!;
        byTarget.set(target, [...(byTarget.get(target) ?? []), name]);
      }
      return byTarget;
    });
  listings.set(dir, { at: now, leftovers });
  return leftovers;
}

/**
 * Forgets every folder listing: the next write into a folder lists it again. Called when a lock is
 * taken over from a holder that is gone, which may have left temporary files behind.
 */
export function forgetCrashLeftoverListings(): void {
  listings.clear();
}

/** Removes temporary files that a crashed write of `target` left beside it. */
export async function removeCrashLeftovers(target: string): Promise<void> {
  const dir = dirname(target);
  const byTarget = await leftoversIn(dir);
  const name = basename(target);
  const found = byTarget.get(name);
  if (!found) return;
  byTarget.delete(name);
  await Promise.all(found.map((f) => unlink(join(dir, f)).catch(() => undefined)));
}

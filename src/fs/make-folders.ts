import { constants } from 'node:fs';
import { lstat, mkdir, open } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * The mode of folders made to hold a file of `fileMode`: never wider than the file needs. The group
 * gets in exactly when it may read the file, as a 0640 file in a 0700 folder is unreadable to it.
 * Others get nothing: no file mode accepted here gives them access to a secret.
 */
export function folderModeFor(fileMode: number): number {
  return fileMode & 0o040 ? 0o750 : 0o700;
}

/**
 * Creates the missing folders of `dir`, one level at a time, each with exactly `mode` (mkdir's mode
 * is narrowed by the umask). Folders that already exist, or that someone else creates meanwhile,
 * are left as they are: their modes are somebody's decision, not ours.
 */
export async function makeFolders(dir: string, mode: number): Promise<void> {
  const missing: string[] = [];
  for (let at = dir; !(await exists(at)) && dirname(at) !== at; at = dirname(at)) missing.unshift(at);
  for (const folder of missing) {
    try {
      await mkdir(folder, { mode });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw error;
    }
    await chmodFolder(folder, mode);
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** Through a handle that refuses links, so a folder swapped for a link after mkdir is not chmod'ed. */
async function chmodFolder(folder: string, mode: number): Promise<void> {
  const handle = await open(folder, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    await handle.chmod(mode);
  } finally {
    await handle.close();
  }
}

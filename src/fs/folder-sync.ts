import { closeSync, fsync, openSync } from 'node:fs';

import { groupSync } from './group-sync.js';

/** One group commit per folder, while anyone waits for it. */
const folders = new Map<string, () => Promise<void>>();

/** fsync(2) on the thread pool: the one step of a write that waits for the disk. */
export function fsyncFile(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fsync(fd, (error) => (error ? reject(error) : resolve())));
}

async function fsyncFolder(dir: string): Promise<void> {
  const fd = openSync(dir, 'r');
  try {
    await fsyncFile(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Makes what was renamed into or removed from `dir` durable: without it a crash can bring back the
 * old directory entry. Resolves only after an fsync of the folder that began after this call, so
 * whatever the caller did to the folder before calling is covered. Callers that ask while an fsync
 * of the same folder is under way share the one after it (a group commit, see groupSync): n
 * concurrent renames into one folder cost two fsyncs, not n, and none is acknowledged early.
 */
export function syncFolder(dir: string): Promise<void> {
  let sync = folders.get(dir);
  if (!sync) {
    const group = groupSync(
      () => fsyncFolder(dir),
      () => {
        if (folders.get(dir) === group) folders.delete(dir);
      },
    );
    folders.set(dir, group);
    sync = group;
  }
  return sync();
}

import { closeSync, fsync, openSync } from 'node:fs';

interface FolderSyncs {
  /** The fsync under way, if any. */
  running: Promise<void> | undefined;
  /** The fsync that starts once the running one ends, shared by everyone who asked meanwhile. */
  next: Promise<void> | undefined;
}

const folders = new Map<string, FolderSyncs>();

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
 * of the same folder is under way share the one after it (a group commit): n concurrent renames
 * into one folder cost two fsyncs, not n, and none is acknowledged early.
 */
export function syncFolder(dir: string): Promise<void> {
  let syncs = folders.get(dir);
  if (!syncs) {
    syncs = { running: undefined, next: undefined };
    folders.set(dir, syncs);
  }
  const state = syncs;
  if (!state.running) {
    const running = fsyncFolder(dir).finally(() => {
      state.running = undefined;
      if (!state.next) folders.delete(dir);
    });
    state.running = running;
    return running;
  }
  // The fsync under way may have begun before the caller's change: wait for the next one.
  state.next ??= state.running
    .catch(() => undefined)
    .then(() => {
      state.next = undefined;
      return syncFolder(dir);
    });
  return state.next;
}

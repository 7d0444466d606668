/**
 * A group commit around one sync (an fsync of a folder, an fdatasync of a log): the returned
 * function resolves only after a sync that began after it was called, so whatever the caller wrote
 * before calling is covered, and none is acknowledged early. Callers that ask while a sync is under
 * way share the one after it: n concurrent callers cost two syncs, not n. A failed sync rejects
 * exactly its own callers; the next call starts a new one.
 *
 * `onIdle` runs when a sync ends with nobody waiting for another, so that a table of groups can
 * drop this one.
 *
 * `failForGood`, for a sync of one open descriptor: once a sync fails, it and every later call
 * reject with its error, and no sync runs again. Linux reports a failed writeback once and marks
 * the pages clean, so a later fdatasync on the same descriptor succeeds for data never written.
 */
export function groupSync(sync: () => Promise<void>, onIdle?: () => void, options: { failForGood?: boolean } = {}): () => Promise<void> {
  /** The sync under way, if any. */
  let running: Promise<void> | undefined;
  /** The sync that starts once the running one ends, shared by everyone who asked meanwhile. */
  let next: Promise<void> | undefined;
  /** The failure that ended this group for good (with `failForGood`). */
  let failed: { error: unknown } | undefined;

  const request = (): Promise<void> => {
    if (failed) return Promise.reject(failed.error);
    if (!running) {
      // The executor turns a synchronous throw (an open that fails) into this sync's rejection.
      const started = new Promise<void>((resolve) => resolve(sync()))
        .catch((error: unknown) => {
          if (options.failForGood) failed ??= { error };
          throw error;
        })
        .finally(() => {
          running = undefined;
          if (!next) onIdle?.();
        });
      running = started;
      return started;
    }
    // The sync under way may have begun before the caller's change: wait for the next one.
    next ??= running
      .catch(() => undefined)
      .then(() => {
        next = undefined;
        return request();
      });
    return next;
  };
  return request;
}

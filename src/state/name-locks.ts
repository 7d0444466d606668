/**
 * One rotation per name at a time, across every process that shares a state backend. Each backend
 * brings its own lock (lock files for the file backend, Leases in a cluster).
 */
export interface NameLocks {
  /** Waits up to `waitMs` for the name, taking over a lock whose holder is gone. */
  acquire(name: string, options: { waitMs: number }): Promise<LockResult>;
}

export type LockResult = { held: HeldLock } | { busy: LockHolder | undefined };

export interface HeldLock {
  /**
   * Throws `LockLostError` unless this acquisition still holds the lock: for right before a step
   * that must not be done by two processes (sending a regenerate, staging, committing).
   */
  assertHeld(): Promise<void>;
  /** Gives the lock up if it is still ours; never another holder's. */
  release(): Promise<void>;
}

/** Who holds a lock, for messages: `pid 4242 on host-a`, and since when. */
export interface LockHolder {
  who: string;
  since: string;
}

import type { JournalEntry } from './journal-entry.js';

/**
 * `durable: false` lets a write ride on the next sync instead of waiting for its own: for what a
 * crash may lose without harm. A lost delivered mark means that sink is written again (sink writes
 * are idempotent by rotation id); a lost erasure after a durable commit brings back a staged entry
 * whose new id is already current, which the next run recognises as committed. A process killed
 * (not a power loss) loses neither: they are in the page cache.
 */
export interface WriteOptions {
  durable?: boolean;
}

/**
 * Unfinished rotations, one entry per name. Each write and erasure is durable before it resolves
 * (before the next step starts), unless `durable: false` says it need not be.
 */
export interface Journal {
  read(name: string): Promise<JournalEntry | undefined>;
  write(entry: JournalEntry, options?: WriteOptions): Promise<void>;
  /** Durable by default: an erasure on a refusal or reconcile, or by an operator, must not come back. */
  erase(name: string, options?: WriteOptions): Promise<void>;
  /** Removes what a crashed write left beside the entry (it may hold a secret). Call under the name's lock. */
  removeLeftovers(name: string): Promise<void>;
  /** Names with an entry, for entries whose name left the policy. */
  names(): Promise<string[]>;
  /** Where an entry lives, for messages. */
  describe(name: string): string;
}

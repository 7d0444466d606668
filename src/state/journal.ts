import type { JournalEntry } from './journal-entry.js';

/** Unfinished rotations, one entry per name, each write durable before the next step starts. */
export interface Journal {
  read(name: string): Promise<JournalEntry | undefined>;
  write(entry: JournalEntry): Promise<void>;
  erase(name: string): Promise<void>;
  /** Removes what a crashed write left beside the entry (it may hold a secret). Call under the name's lock. */
  removeLeftovers(name: string): Promise<void>;
  /** Names with an entry, for entries whose name left the policy. */
  names(): Promise<string[]>;
  /** Where an entry lives, for messages. */
  describe(name: string): string;
}

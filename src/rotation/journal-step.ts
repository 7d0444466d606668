import type { HeldEntry, IntentEntry, JournalEntry, StagedEntry } from '../state/journal-entry.js';
import type { StateRecord } from '../state/state-record.js';

/**
 * What a name's journal entry makes the next step, before any check: the one value `plan` shows
 * and `once` acts on, so the two cannot disagree.
 * - `held`: a secret with an id we cannot use waits for an operator (`rotate --held-id`);
 * - `erase-committed`: an intent whose rotation the state already records (a commit from memory
 *   whose journal could not be erased): erased, and the name is checked as usual;
 * - `finish-staged`: deliver, verify and commit the staged secret, without regenerating;
 * - `reconcile`: a regenerate whose outcome is unknown: ask the service what happened first;
 * - `check`: nothing unfinished.
 */
export type JournalStep =
  | { kind: 'held'; entry: HeldEntry }
  | { kind: 'erase-committed'; entry: IntentEntry }
  | { kind: 'finish-staged'; entry: StagedEntry }
  | { kind: 'reconcile'; entry: IntentEntry }
  | { kind: 'check' };

export function journalStep(entry: JournalEntry | undefined, record: StateRecord | undefined): JournalStep {
  if (!entry) return { kind: 'check' };
  if (entry.phase === 'held') return { kind: 'held', entry };
  if (entry.phase === 'staged') return { kind: 'finish-staged', entry };
  return record && intentWasCommitted(record, entry) ? { kind: 'erase-committed', entry } : { kind: 'reconcile', entry };
}

/**
 * An intent whose rotation the state already records: the staged write failed, the rotation was
 * finished from memory and committed, and the intent could not be erased. Nothing is left to do.
 */
function intentWasCommitted(record: StateRecord, entry: IntentEntry): boolean {
  return record.currentId !== entry.oldId && record.lineage.some((l) => l.id === entry.oldId && l.replacedAt === entry.startedAt);
}

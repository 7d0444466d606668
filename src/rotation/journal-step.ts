import { StateIntegrityError } from '../errors.js';
import { needsAuthenticating } from '../state/authenticated-state.js';
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

export function journalStep(entry: JournalEntry | undefined, record: StateRecord | undefined, trust: EntryTrust): JournalStep {
  if (!entry) return { kind: 'check' };
  refuseOutsideLineage(entry, record, trust);
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

/**
 * The trust a check gives a name's entry: authenticated only when the run has a key and the entry
 * was read with that key's MAC (not accepted through `none` or a previous key).
 */
export function entryTrust(policyId: string, stateKey: unknown, entry: JournalEntry | undefined): EntryTrust {
  return { policyId, authenticated: stateKey !== undefined && entry !== undefined && !needsAuthenticating(entry) };
}

/** What an entry's ids are checked against besides the record. */
export interface EntryTrust {
  /** The policy's id for the name: what a lineage starts from when there is no record yet. */
  policyId: string;
  /** Whether the current state key authenticated the entry (its MAC), so that token-rotator wrote it. */
  authenticated: boolean;
}

/**
 * An entry must continue this name's lineage: its old id is the current id, or one the lineage
 * knows (a rotation committed but not erased, a name pointed elsewhere since). A staged id equal to
 * the old one is what a planted entry looks like (the "new" token verifies as the current one);
 * the service is not known to answer so, and an entry the key authenticates is believed.
 */
function refuseOutsideLineage(entry: JournalEntry, record: StateRecord | undefined, trust: EntryTrust): void {
  const known = new Set(
    record ? [trust.policyId, record.currentId, record.adoptedId, ...record.lineage.map((l) => l.id)] : [trust.policyId],
  );
  const newId = entry.phase === 'staged' ? entry.staged.newId : undefined;
  const committed =
    (newId !== undefined && record?.currentId === newId) ||
    (entry.phase === 'intent' && record !== undefined && intentWasCommitted(record, entry));
  const current = record?.currentId ?? trust.policyId;
  if (!known.has(entry.oldId) && !committed) {
    throw new StateIntegrityError(
      `the journal entry of "${entry.name}" continues from token ${entry.oldId}, which is not in this name's lineage ` +
        `(current ${record?.currentId ?? trust.policyId}): not written for this name's tokens. Nothing of it is used and nothing ` +
        `is delivered; find out who wrote it, and do not remove it before checking, as it may hold a secret`,
    );
  }
  // A token becomes part of the lineage only once it was current and then replaced: an entry that
  // stages one is an earlier rotation's, written back (authenticated, as it was then). Its secret is
  // of a token the name has moved past; delivering it would undo the rotations since.
  if (entry.phase === 'staged' && !committed && record?.lineage.some((l) => l.id === entry.staged.newId)) {
    throw new StateIntegrityError(
      `the journal entry of "${entry.name}" stages token ${entry.staged.newId}, which this name has already replaced (it is in the lineage; ` +
        `current ${record.currentId}): an earlier rotation's entry, written back. Nothing of it is used and nothing is delivered; ` +
        `find out who wrote it`,
    );
  }
  if (!committed && known.has(entry.oldId) && entry.oldId !== current) {
    // Unfinished rotations start from the current token; one from a token replaced since is an
    // earlier rotation's entry written back (a replayed intent would reconcile, and regenerate, again).
    throw new StateIntegrityError(
      `the journal entry of "${entry.name}" continues from token ${entry.oldId}, which this name has replaced since ` +
        `(current ${current}): an earlier rotation's entry written back, or the policy pointed the name at another token ` +
        `while a rotation was unfinished. Nothing of it is used and nothing is delivered; find out who wrote it, and do not ` +
        `remove it before checking, as it may hold a secret`,
    );
  }
  if (newId === entry.oldId && !trust.authenticated) {
    throw new StateIntegrityError(
      `the journal entry of "${entry.name}" stages token ${newId} as the replacement of itself, and no state key ` +
        `authenticates it: a regenerate answers a new id, so it was not written by a rotation. Nothing of it is used ` +
        `and nothing is delivered; find out who wrote it`,
    );
  }
}

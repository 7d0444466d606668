import type { JournalEntry } from '../state/journal-entry.js';
import { openSecret, type StateKeys } from '../state/secret-box.js';
import type { StateRecord } from '../state/state-record.js';
import { heldSealContext, sealContext } from './seal-context.js';

/**
 * Opens the secrets a name's state holds (its current secret, a staged or held new one) only so
 * that this process knows them: a command that reads the sinks without delivering anything
 * (`status`) must still scrub them from what a sink's program prints when it fails. What does not
 * open (no key, another key) is left alone: the command reports the state, it does not judge it.
 */
export function learnStateSecrets(record: StateRecord | undefined, entry: JournalEntry | undefined, keys: StateKeys): void {
  if (record?.secret) openSecret(record.secret.value, keys, sealContext(record.name, record.currentId));
  if (entry?.phase === 'staged') openSecret(entry.staged.secret, keys, sealContext(entry.name, entry.staged.newId));
  if (entry?.phase === 'held') openSecret(entry.held.secret, keys, heldSealContext(entry.name, entry.startedAt));
}

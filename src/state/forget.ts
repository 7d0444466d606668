import type { JournalEntry } from './journal-entry.js';
import type { StateRecord } from './state-record.js';

/** What was read of a name's saved state: a document, nothing, or why it could not be read. */
export type Saved<T> = { found: T } | { none: true } | { unreadable: string };

/** What forgetting a name would do, decided from what its state holds. Never a secret in it. */
export type ForgetDecision =
  | { kind: 'nothing' }
  /** A new secret is held that no sink may have: forgetting would lose its only copy. */
  | { kind: 'refuse'; why: string }
  /** Each thing forgetting loses, one line each, for the confirmation. */
  | { kind: 'forget'; loses: string[] };

/**
 * Whether `state forget` may remove a name's record and journal entry, and what is lost if it does.
 * A staged or held new secret, or an entry that cannot be read (it may hold one), is refused: it
 * is delivered first by a run, which resumes it. A committed record may go, with what it held said.
 */
export function decideForget(
  name: string,
  policyId: string | undefined,
  record: Saved<StateRecord>,
  entry: Saved<JournalEntry>,
): ForgetDecision {
  const deliver = policyId
    ? `deliver it first: \`token-rotator once\` (or \`token-rotator rotate ${name}\`) resumes the rotation and delivers it`
    : `put '${name}' back in the policy and run \`token-rotator once\` to deliver it first`;
  if ('unreadable' in entry) {
    return {
      kind: 'refuse',
      why: `its journal entry cannot be read (${entry.unreadable}) and may hold the only copy of a new secret; ${deliver}, or inspect it by hand`,
    };
  }
  if ('found' in entry && (entry.found.phase === 'staged' || entry.found.phase === 'held')) {
    const which = entry.found.phase === 'staged' ? `a staged new secret (token ${entry.found.staged.newId})` : 'a held new secret';
    return {
      kind: 'refuse',
      why: `its journal holds ${which} not yet delivered everywhere: forgetting would lose its only copy; ${deliver}`,
    };
  }
  if ('none' in record && 'none' in entry) return { kind: 'nothing' };
  const loses: string[] = [];
  if ('found' in record) {
    const r = record.found;
    loses.push(
      `the record of current token ${r.currentId} (adopted from ${r.adoptedId}, ${r.lineage.length} earlier id${r.lineage.length === 1 ? '' : 's'})`,
    );
    if (r.secret) {
      loses.push(
        "the current secret it holds: a sink that loses it can no longer be repaired without regenerating, and a sink's content is no longer recognised as current",
      );
    }
    if (r.consecutiveFailures > 0) loses.push(`its ${r.consecutiveFailures} failure(s) in a row and their back-off`);
  } else if ('unreadable' in record) {
    loses.push(`a record that cannot be read (${record.unreadable})`);
  }
  if ('found' in entry) {
    loses.push(`an unfinished regenerate of ${entry.found.oldId} with no known outcome: a token it may have made is not looked for`);
  }
  loses.push(
    policyId
      ? `the next run takes the policy's id (${policyId}) as current, or what the sinks' metadata says`
      : `'${name}' is not in the policy: nothing of it is left`,
  );
  return { kind: 'forget', loses };
}

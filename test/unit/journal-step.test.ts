import { describe, expect, it } from 'vitest';

import { StateIntegrityError } from '../../src/errors.js';
import { type EntryTrust, journalStep } from '../../src/rotation/journal-step.js';
import { JOURNAL_VERSION, type JournalEntry } from '../../src/state/journal-entry.js';
import { resolveLineage } from '../../src/state/lineage.js';

const startedAt = '2026-11-22T12:00:00.000Z';
const intent: JournalEntry = {
  version: JOURNAL_VERSION,
  name: 'ingest',
  rotationId: 'r1',
  phase: 'intent',
  reason: 'due',
  startedAt,
  oldId: 'tok-1',
  oldExpiresAt: null,
  existingTokenExpiresAt: '2026-11-22T13:00:00.000Z',
  newTokenExpiresAt: null,
  delivered: [],
};
const trust: EntryTrust = { policyId: 'tok-1', authenticated: false };
const before = resolveLineage({ name: 'ingest', id: 'tok-1' }, undefined, new Date(startedAt)).record;

describe('the next step a journal entry makes: one value for plan and once', () => {
  it('nothing unfinished: check', () => {
    expect(journalStep(undefined, before, trust)).toEqual({ kind: 'check' });
  });

  it('an intent whose outcome is unknown: reconcile', () => {
    expect(journalStep(intent, before, trust)).toMatchObject({ kind: 'reconcile' });
    expect(journalStep(intent, undefined, trust)).toMatchObject({ kind: 'reconcile' });
  });

  it('an intent the state already records as committed (a commit from memory): erased, then a plain check', () => {
    const committed = { ...before, currentId: 'tok-2', lineage: [{ id: 'tok-1', replacedAt: startedAt, expiresAt: null }] };
    expect(journalStep(intent, committed, trust)).toMatchObject({ kind: 'erase-committed' });
    // Another rotation of the same old id (another start time) is not this one: an earlier intent
    // written back after tok-1 was replaced, refused rather than reconciled (and regenerated) again.
    const other = { ...committed, lineage: [{ id: 'tok-1', replacedAt: '2026-11-01T00:00:00.000Z', expiresAt: null }] };
    expect(() => journalStep(intent, other, trust)).toThrow(/which this name has replaced since/);
  });

  it('a staged entry: finish it; a held one: wait for an operator', () => {
    const staged: JournalEntry = {
      ...intent,
      phase: 'staged',
      staged: { newId: 'tok-2', newExpiresAt: null, stagedAt: startedAt, secret: { plain: 'x' } },
    };
    expect(journalStep(staged, before, trust)).toMatchObject({ kind: 'finish-staged' });
    const held: JournalEntry = { ...intent, phase: 'held', held: { problem: 'no id', heldAt: startedAt, secret: { plain: 'x' } } };
    expect(journalStep(held, before, trust)).toMatchObject({ kind: 'held' });
  });

  it('an entry that does not continue the lineage is refused: nothing of it is used', () => {
    const planted: JournalEntry = {
      ...intent,
      oldId: 'someone-elses',
      phase: 'staged',
      staged: { newId: 'tok-9', newExpiresAt: null, stagedAt: startedAt, secret: { plain: 'x' } },
    };
    expect(() => journalStep(planted, before, trust)).toThrow(StateIntegrityError);
    expect(() => journalStep({ ...intent, oldId: 'someone-elses' }, before, trust)).toThrow(/not in this name's lineage/);
    // With no record, the policy's id is where the lineage starts.
    expect(() => journalStep({ ...intent, oldId: 'someone-elses' }, undefined, trust)).toThrow(StateIntegrityError);
    // A rotation committed but not erased: the record's current id is the staged one.
    const committed = { ...before, currentId: 'tok-9' };
    expect(journalStep(planted, committed, trust)).toMatchObject({ kind: 'finish-staged' });
  });

  it('a staged entry whose new token the lineage has replaced since is refused, authenticated or not: it was written back', () => {
    const staged: JournalEntry = {
      ...intent,
      phase: 'staged',
      staged: { newId: 'tok-2', newExpiresAt: null, stagedAt: startedAt, secret: { plain: 'x' } },
    };
    const since = {
      ...before,
      currentId: 'tok-3',
      lineage: [
        { id: 'tok-2', replacedAt: '2026-11-23T12:00:00.000Z', expiresAt: null },
        { id: 'tok-1', replacedAt: startedAt, expiresAt: null },
      ],
    };
    expect(() => journalStep(staged, since, { ...trust, authenticated: true })).toThrow(/already replaced/);
    // Committed and not yet erased, tok-2 still current: finished as before.
    expect(journalStep(staged, { ...since, currentId: 'tok-2', lineage: since.lineage.slice(1) }, trust)).toMatchObject({
      kind: 'finish-staged',
    });
  });

  it('a staged id equal to its old id is refused unless the state key authenticated the entry', () => {
    const selfReplacing: JournalEntry = {
      ...intent,
      phase: 'staged',
      staged: { newId: 'tok-1', newExpiresAt: null, stagedAt: startedAt, secret: { plain: 'x' } },
    };
    expect(() => journalStep(selfReplacing, before, trust)).toThrow(/replacement of itself/);
    expect(journalStep(selfReplacing, before, { ...trust, authenticated: true })).toMatchObject({ kind: 'finish-staged' });
  });
});

import { describe, expect, it } from 'vitest';

import { StateIntegrityError } from '../../src/errors.js';
import { type EntryTrust, entryTrust, journalStep } from '../../src/rotation/journal-step.js';
import { authenticatedState } from '../../src/state/authenticated-state.js';
import { JOURNAL_VERSION, type JournalEntry } from '../../src/state/journal-entry.js';
import { resolveLineage } from '../../src/state/lineage.js';
import { newStateKey } from '../fakes/fake-deps.js';
import { MemoryStateStorage } from '../fakes/memory-state-backend.js';

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

describe('which ids an entry may continue from', () => {
  const staged = (newId: string, oldId = 'tok-1'): JournalEntry => ({
    ...intent,
    oldId,
    phase: 'staged',
    staged: { newId, newExpiresAt: null, stagedAt: startedAt, secret: { plain: 'x' } },
  });
  /** tok-0 adopted, rotated to tok-1, then to tok-2: the name is at tok-2. */
  const rotatedTwice = {
    ...resolveLineage({ name: 'ingest', id: 'tok-0' }, undefined, new Date(startedAt)).record,
    currentId: 'tok-2',
    lineage: [
      { id: 'tok-1', replacedAt: '2026-11-20T00:00:00.000Z', expiresAt: null },
      { id: 'tok-0', replacedAt: '2026-11-10T00:00:00.000Z', expiresAt: null },
    ],
  };
  const policyTrust: EntryTrust = { policyId: 'tok-0', authenticated: false };

  it('the current id, though the policy still names the token it started from', () => {
    expect(journalStep({ ...intent, oldId: 'tok-2' }, rotatedTwice, policyTrust)).toMatchObject({ kind: 'reconcile' });
    expect(journalStep(staged('tok-3', 'tok-2'), rotatedTwice, policyTrust)).toMatchObject({ kind: 'finish-staged' });
  });

  it('with no record, the policy’s id, for an intent and for a staged entry alike', () => {
    expect(journalStep(intent, undefined, trust)).toMatchObject({ kind: 'reconcile' });
    expect(journalStep(staged('tok-2'), undefined, trust)).toMatchObject({ kind: 'finish-staged' });
  });

  it('an id the name replaced since is known, but no longer where a rotation starts: written back, and the message says the current id', () => {
    expect(() => journalStep({ ...intent, oldId: 'tok-1' }, rotatedTwice, policyTrust)).toThrow(
      /which this name has replaced since \(current tok-2\)/,
    );
  });

  it('an id never in the lineage: the message names the current id, from the record or else the policy', () => {
    expect(() => journalStep({ ...intent, oldId: 'tok-x' }, rotatedTwice, policyTrust)).toThrow(
      /not in this name's lineage \(current tok-2\)/,
    );
    expect(() => journalStep({ ...intent, oldId: 'tok-x' }, undefined, trust)).toThrow(/not in this name's lineage \(current tok-1\)/);
  });

  it('an intent is committed only by a replacement of its old id at its own start: another replacement at that time is not it', () => {
    const other = { ...rotatedTwice, lineage: [{ id: 'tok-0', replacedAt: startedAt, expiresAt: null }] };
    expect(() => journalStep({ ...intent, oldId: 'tok-1' }, { ...other, adoptedId: 'tok-1' }, policyTrust)).toThrow(StateIntegrityError);
  });

  it('an intent whose old id is still current is not committed, whatever the lineage lists', () => {
    const edited = { ...before, lineage: [{ id: 'tok-1', replacedAt: startedAt, expiresAt: null }] };
    expect(journalStep(intent, edited, trust)).toMatchObject({ kind: 'reconcile' });
  });

  it('a staged token new to the lineage is finished; one the lineage lists is refused, naming the current id', () => {
    expect(journalStep(staged('tok-3', 'tok-2'), rotatedTwice, policyTrust)).toMatchObject({ kind: 'finish-staged' });
    expect(() => journalStep(staged('tok-1', 'tok-2'), rotatedTwice, { ...policyTrust, authenticated: true })).toThrow(
      /already replaced \(it is in the lineage; current tok-2\)/,
    );
  });

  it('a staged entry for the current token is a commit to erase, even where an edited lineage also lists that token', () => {
    const edited = {
      ...rotatedTwice,
      lineage: [{ id: 'tok-2', replacedAt: '2026-11-21T00:00:00.000Z', expiresAt: null }, ...rotatedTwice.lineage],
    };
    expect(journalStep(staged('tok-2', 'tok-1'), edited, policyTrust)).toMatchObject({ kind: 'finish-staged' });
  });
});

describe('the trust a check gives an entry', () => {
  it('authenticated only when the run has a key and that key’s MAC vouched for the entry', async () => {
    const key = newStateKey();
    const storage = new MemoryStateStorage();
    const raw = storage.open();
    await raw.journal.write(intent);
    const accepting = authenticatedState(raw, { keys: { current: key, previous: [] }, acceptUnauthenticated: true });
    const unvouched = await accepting.journal.read('ingest');
    await accepting.journal.write(intent);
    const vouched = await accepting.journal.read('ingest');

    expect(entryTrust('tok-1', key, vouched)).toEqual({ policyId: 'tok-1', authenticated: true });
    expect(entryTrust('tok-1', key, unvouched), 'accepted under ROTATOR_STATE_KEY_PREVIOUS=none').toEqual({
      policyId: 'tok-1',
      authenticated: false,
    });
    expect(entryTrust('tok-1', undefined, intent), 'no key: nothing is authenticated').toEqual({ policyId: 'tok-1', authenticated: false });
    expect(entryTrust('tok-1', key, undefined)).toEqual({ policyId: 'tok-1', authenticated: false });
  });
});

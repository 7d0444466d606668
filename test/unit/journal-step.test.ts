import { describe, expect, it } from 'vitest';

import { journalStep } from '../../src/rotation/journal-step.js';
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
const before = resolveLineage({ name: 'ingest', id: 'tok-1' }, undefined, new Date(startedAt)).record;

describe('the next step a journal entry makes: one value for plan and once', () => {
  it('nothing unfinished: check', () => {
    expect(journalStep(undefined, before)).toEqual({ kind: 'check' });
  });

  it('an intent whose outcome is unknown: reconcile', () => {
    expect(journalStep(intent, before)).toMatchObject({ kind: 'reconcile' });
    expect(journalStep(intent, undefined)).toMatchObject({ kind: 'reconcile' });
  });

  it('an intent the state already records as committed (a commit from memory): erased, then a plain check', () => {
    const committed = { ...before, currentId: 'tok-2', lineage: [{ id: 'tok-1', replacedAt: startedAt, expiresAt: null }] };
    expect(journalStep(intent, committed)).toMatchObject({ kind: 'erase-committed' });
    // Another rotation of the same old id (another start time) is not this one.
    const other = { ...committed, lineage: [{ id: 'tok-1', replacedAt: '2026-11-01T00:00:00.000Z', expiresAt: null }] };
    expect(journalStep(intent, other)).toMatchObject({ kind: 'reconcile' });
  });

  it('a staged entry: finish it; a held one: wait for an operator', () => {
    const staged: JournalEntry = {
      ...intent,
      phase: 'staged',
      staged: { newId: 'tok-2', newExpiresAt: null, stagedAt: startedAt, secret: { plain: 'x' } },
    };
    expect(journalStep(staged, before)).toMatchObject({ kind: 'finish-staged' });
    const held: JournalEntry = { ...intent, phase: 'held', held: { problem: 'no id', heldAt: startedAt, secret: { plain: 'x' } } };
    expect(journalStep(held, before)).toMatchObject({ kind: 'held' });
  });
});

import { describe, expect, it } from 'vitest';

import { decideForget } from '../../src/state/forget.js';
import { JOURNAL_VERSION, type JournalEntry } from '../../src/state/journal-entry.js';
import { STATE_VERSION, type StateRecord } from '../../src/state/state-record.js';

const T0 = '2026-11-22T12:00:00.000Z';
const CANARY = 'xaat-CANARY-never-shown';

const record: StateRecord = {
  version: STATE_VERSION,
  name: 'ingest',
  currentId: 'tok-2',
  expiresAt: null,
  adoptedId: 'tok-1',
  adoptedAt: T0,
  lastRotatedAt: T0,
  consecutiveFailures: 0,
  lastFailure: null,
  serviceClock: null,
  secret: { value: { plain: CANARY }, how: 'rotated', rotationId: 'r1', at: T0 },
  lineage: [{ id: 'tok-1', replacedAt: T0, expiresAt: null }],
};
const intent = {
  version: JOURNAL_VERSION,
  name: 'ingest',
  rotationId: 'r2',
  phase: 'intent',
  reason: 'due',
  startedAt: T0,
  oldId: 'tok-2',
  oldExpiresAt: null,
  existingTokenExpiresAt: T0,
  newTokenExpiresAt: T0,
  delivered: [],
} as unknown as JournalEntry;
const staged = {
  ...intent,
  phase: 'staged',
  staged: { newId: 'tok-3', newExpiresAt: T0, stagedAt: T0, secret: { plain: CANARY } },
} as JournalEntry;
const held = { ...intent, phase: 'held', held: { problem: 'bad id', heldAt: T0, secret: { plain: CANARY } } } as JournalEntry;
const none = { none: true as const };

describe('what state forget may do with a name', () => {
  it('nothing saved is nothing to do', () => {
    expect(decideForget('ingest', 'tok-1', none, none)).toEqual({ kind: 'nothing' });
  });

  it.each([
    ['a staged secret', { found: staged }, /a staged new secret \(token tok-3\)/],
    ['a held secret', { found: held }, /a held new secret/],
    ['an entry that cannot be read', { unreadable: 'not valid JSON' }, /cannot be read \(not valid JSON\) and may hold the only copy/],
  ] as const)('refuses %s, saying how to deliver it first', (_what, entry, why) => {
    const decision = decideForget('ingest', 'tok-1', { found: record }, entry);
    expect(decision).toMatchObject({ kind: 'refuse', why: expect.stringMatching(why) });
    expect(JSON.stringify(decision)).toContain('token-rotator once');
    expect(JSON.stringify(decision)).not.toContain(CANARY);
  });

  it('a name no longer in the policy is told to be put back to deliver its secret', () => {
    expect(decideForget('gone', undefined, none, { found: staged })).toMatchObject({
      kind: 'refuse',
      why: expect.stringContaining("put 'gone' back in the policy"),
    });
  });

  it('a committed record may go: the held current secret, an unfinished regenerate and what comes next are said, never the secret', () => {
    const decision = decideForget('ingest', 'tok-1', { found: record }, { found: intent });
    expect(decision.kind).toBe('forget');
    const loses = (decision as { loses: string[] }).loses.join('\n');
    expect(loses).toContain('current token tok-2 (adopted from tok-1, 1 earlier id)');
    expect(loses).toContain('can no longer be repaired without regenerating');
    expect(loses).toContain('an unfinished regenerate of tok-2');
    expect(loses).toContain("the next run takes the policy's id (tok-1) as current");
    expect(loses).not.toContain(CANARY);
  });

  it('a record that cannot be read may go too', () => {
    expect(decideForget('ingest', 'tok-1', { unreadable: 'truncated' }, none)).toMatchObject({
      kind: 'forget',
      loses: expect.arrayContaining(['a record that cannot be read (truncated)']),
    });
  });
});

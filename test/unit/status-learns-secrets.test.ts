import { randomUUID } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { heldSealContext, sealContext } from '../../src/rotation/seal-context.js';
import { learnStateSecrets } from '../../src/rotation/state-secrets.js';
import { scrubSecrets, Secret } from '../../src/secret.js';
import { JOURNAL_VERSION, type JournalEntry } from '../../src/state/journal-entry.js';
import { sealSecret, type StateKeys } from '../../src/state/secret-box.js';
import { STATE_VERSION, type StateRecord } from '../../src/state/state-record.js';
import { newStateKey } from '../fakes/fake-deps.js';

const startedAt = '2026-11-22T12:00:00.000Z';
/**
 * A secret this process has never held. Nothing in common with the others (no shared prefix): the
 * scrubber also masks a piece of a known secret, which would hide one not yet known.
 */
const fresh = () => randomUUID();
const sealed = (value: string, keys: StateKeys, context: string) => sealSecret(new Secret(value), keys.current, context);

function recordHolding(value: ReturnType<typeof sealed>): StateRecord {
  return {
    version: STATE_VERSION,
    name: 'ingest',
    currentId: 'tok-1',
    expiresAt: null,
    adoptedId: 'tok-1',
    adoptedAt: startedAt,
    lastRotatedAt: null,
    consecutiveFailures: 0,
    lastFailure: null,
    serviceClock: null,
    lineage: [],
    secret: { value, how: 'rotated', rotationId: 'r0', at: startedAt },
  };
}
const intent: JournalEntry = {
  version: JOURNAL_VERSION,
  name: 'ingest',
  rotationId: 'r1',
  phase: 'intent',
  reason: 'due',
  startedAt,
  oldId: 'tok-1',
  oldExpiresAt: null,
  existingTokenExpiresAt: startedAt,
  newTokenExpiresAt: null,
  delivered: [],
};

/**
 * Sealing a secret makes this process know it; the process forgets the oldest of the secrets it
 * knows beyond a thousand, so a thousand others make it forget what the test sealed.
 */
function forgetSealed(): void {
  for (let i = 0; i <= 1000; i++) new Secret(`filler-${randomUUID()}`);
}

/** Whether this process would scrub `value` from what it prints. */
const scrubbed = (value: string) => !scrubSecrets(`sink said: ${value}`).includes(value);

describe('status opens the secrets the state holds, so that a failing sink’s output is scrubbed of them', () => {
  it('the current secret of the record, the staged secret and the held secret, each with the context it was sealed in', () => {
    const keys: StateKeys = { current: newStateKey(), previous: [] };
    const [current, stagedSecret, heldSecret] = [fresh(), fresh(), fresh()];
    const record = recordHolding(sealed(current, keys, sealContext('ingest', 'tok-1')));
    const staged: JournalEntry = {
      ...intent,
      phase: 'staged',
      staged: {
        newId: 'tok-2',
        newExpiresAt: null,
        stagedAt: startedAt,
        secret: sealed(stagedSecret, keys, sealContext('ingest', 'tok-2')),
      },
    };
    const held: JournalEntry = {
      ...intent,
      phase: 'held',
      held: { problem: 'no id', heldAt: startedAt, secret: sealed(heldSecret, keys, heldSealContext('ingest', startedAt)) },
    };
    forgetSealed();
    expect([current, stagedSecret, heldSecret].map(scrubbed), 'not known before').toEqual([false, false, false]);
    // Opening succeeds only in the right context: a wrong one would leave the value unopened.
    learnStateSecrets(record, staged, keys);
    learnStateSecrets(undefined, held, keys);
    expect([current, stagedSecret, heldSecret].map(scrubbed)).toEqual([true, true, true]);
  });

  it('nothing to open (no record, no entry, an intent) is fine', () => {
    const keys: StateKeys = { current: newStateKey(), previous: [] };
    expect(() => learnStateSecrets(undefined, undefined, keys)).not.toThrow();
    expect(() => learnStateSecrets(undefined, intent, keys)).not.toThrow();
    const { secret: _none, ...bare } = recordHolding({ plain: fresh() });
    expect(() => learnStateSecrets(bare, intent, keys)).not.toThrow();
  });

  it('a secret sealed with another key, or with no key given, is left alone: status reports, it does not judge', () => {
    const sealer: StateKeys = { current: newStateKey(), previous: [] };
    const record = recordHolding(sealed(fresh(), sealer, sealContext('ingest', 'tok-1')));
    expect(() => learnStateSecrets(record, undefined, { current: newStateKey(), previous: [] })).not.toThrow();
    expect(() => learnStateSecrets(record, undefined, { current: undefined, previous: [] })).not.toThrow();
  });

  it('a previous key opens what it sealed', () => {
    const old = newStateKey();
    const value = fresh();
    const record = recordHolding(sealed(value, { current: old, previous: [] }, sealContext('ingest', 'tok-1')));
    forgetSealed();
    expect(scrubbed(value)).toBe(false);
    learnStateSecrets(record, undefined, { current: newStateKey(), previous: [old] });
    expect(scrubbed(value)).toBe(true);
  });
});

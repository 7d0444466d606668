import { describe, expect, it } from 'vitest';

import { SimulatedCrash, stateKeysOf } from '../../src/rotation/deps.js';
import { heldSealContext, sealContext } from '../../src/rotation/seal-context.js';
import { Secret } from '../../src/secret.js';
import { openSecret, sealSecret } from '../../src/state/secret-box.js';
import { newStateKey } from '../fakes/fake-deps.js';

const startedAt = '2026-11-22T12:00:00.000Z';
const opens = (sealed: ReturnType<typeof sealSecret>, key: ReturnType<typeof newStateKey>, context: string) => {
  const opened = openSecret(sealed, key, context);
  return opened instanceof Secret ? opened.reveal() : opened;
};

describe('a sealed secret is bound to its name and token: moved elsewhere, it does not open', () => {
  it('a staged or current secret opens only for its own name and token id', () => {
    const key = newStateKey();
    const sealed = sealSecret(new Secret('xaat-c4n4ry-bound'), key, sealContext('ingest', 'tok-2'));
    expect(opens(sealed, key, sealContext('ingest', 'tok-2'))).toBe('xaat-c4n4ry-bound');
    expect(opens(sealed, key, sealContext('ingest', 'tok-3'))).toBe('wrong-key');
    expect(opens(sealed, key, sealContext('billing', 'tok-2'))).toBe('wrong-key');
  });

  it('a held secret, which has no id, opens only for its own name and rotation start, and never as a staged one', () => {
    const key = newStateKey();
    const sealed = sealSecret(new Secret('xaat-c4n4ry-held'), key, heldSealContext('ingest', startedAt));
    expect(opens(sealed, key, heldSealContext('ingest', startedAt))).toBe('xaat-c4n4ry-held');
    expect(opens(sealed, key, heldSealContext('ingest', '2026-11-22T12:00:01.000Z'))).toBe('wrong-key');
    expect(opens(sealed, key, heldSealContext('billing', startedAt))).toBe('wrong-key');
    expect(opens(sealed, key, sealContext('ingest', startedAt))).toBe('wrong-key');
  });
});

describe('one seal per secret, key and context', () => {
  // A rotation stores its new secret staged in the journal, then in the committed record: one seal.
  it('the same secret sealed again with the same key and context is the same sealed value, and it opens', () => {
    const key = newStateKey();
    const secret = new Secret('xaat-c4n4ry-twice');
    const staged = sealSecret(secret, key, sealContext('ingest', 'tok-2'));
    const committed = sealSecret(secret, key, sealContext('ingest', 'tok-2'));
    expect(committed).toEqual(staged);
    expect(Object.isFrozen(committed) && 'sealed' in committed && Object.isFrozen(committed.sealed)).toBe(true);
    expect(opens(committed, key, sealContext('ingest', 'tok-2'))).toBe('xaat-c4n4ry-twice');
  });

  it('another context, another key or another secret gets a fresh nonce, and each opens only as sealed', () => {
    const [key, other] = [newStateKey(), newStateKey()];
    const secret = new Secret('xaat-c4n4ry-fresh');
    const ivOf = (stored: ReturnType<typeof sealSecret>) => ('sealed' in stored ? stored.sealed.iv : undefined);
    const first = sealSecret(secret, key, sealContext('ingest', 'tok-2'));
    const otherContext = sealSecret(secret, key, sealContext('ingest', 'tok-3'));
    const otherKey = sealSecret(secret, other, sealContext('ingest', 'tok-3'));
    const otherSecret = sealSecret(new Secret('xaat-c4n4ry-fresh'), other, sealContext('ingest', 'tok-3'));
    expect(new Set([first, otherContext, otherKey, otherSecret].map(ivOf)).size).toBe(4);
    expect(opens(otherContext, key, sealContext('ingest', 'tok-3'))).toBe('xaat-c4n4ry-fresh');
    expect(opens(otherKey, other, sealContext('ingest', 'tok-3'))).toBe('xaat-c4n4ry-fresh');
    expect(opens(otherKey, key, sealContext('ingest', 'tok-3'))).toBe('wrong-key');
  });
});

describe('the run’s key ring', () => {
  it('the current key seals; it and every previous key open; none given is none', () => {
    const [current, previous] = [newStateKey(), newStateKey()];
    expect(stateKeysOf({ stateKey: current, previousStateKeys: [previous] })).toEqual({ current, previous: [previous] });
    expect(stateKeysOf({ stateKey: current })).toEqual({ current, previous: [] });
    expect(stateKeysOf({ stateKey: undefined })).toEqual({ current: undefined, previous: [] });
  });
});

describe('a simulated crash (the tests’ failpoints)', () => {
  it('says at which step the process died', () => {
    const crash = new SimulatedCrash('staged');
    expect(crash).toBeInstanceOf(Error);
    expect(crash.step).toBe('staged');
    expect(crash.name).toBe('SimulatedCrash');
    expect(crash.message).toContain('staged');
  });
});

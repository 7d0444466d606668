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

import { describe, expect, it } from 'vitest';

import { StateKeyError } from '../../src/errors.js';
import { fingerprintOf } from '../../src/policy/fingerprint.js';
import { currentSecretFor, heldSecretOf, storedCurrentSecret } from '../../src/rotation/current-secret.js';
import { rotateToken } from '../../src/rotation/rotate-token.js';
import { sealContext } from '../../src/rotation/seal-context.js';
import { Secret } from '../../src/secret.js';
import { keyIdOf, openSecret, sealSecret, type StateKeys } from '../../src/state/secret-box.js';
import type { StateRecord } from '../../src/state/state-record.js';
import { DAY, newStateKey, openWorld } from '../fakes/fake-deps.js';

const now = new Date('2026-11-22T12:00:00.000Z');
const at = '2026-11-01T00:00:00.000Z';

function record(overrides: Partial<StateRecord> = {}): StateRecord {
  return {
    version: 1,
    name: 'ingest',
    currentId: 'tok-2',
    expiresAt: null,
    adoptedId: 'tok-1',
    adoptedAt: at,
    lastRotatedAt: at,
    consecutiveFailures: 0,
    lastFailure: null,
    serviceClock: null,
    lineage: [{ id: 'tok-1', replacedAt: at, expiresAt: null }],
    ...overrides,
  };
}

const holding = (value: NonNullable<StateRecord['secret']>['value']) =>
  record({ secret: { value, how: 'rotated', rotationId: 'ingest@r2', at } });

describe('the current secret the state holds', () => {
  it('none held: undefined, and the sinks are looked at instead', () => {
    expect(heldSecretOf(record(), { current: newStateKey(), previous: [] })).toBeUndefined();
  });

  it('sealed with the current key: known as it was made, nothing to write again', () => {
    const key = newStateKey();
    const value = sealSecret(new Secret('xaat-c4n4ry-current'), key, sealContext('ingest', 'tok-2'));
    const held = heldSecretOf(holding(value), { current: key, previous: [] });
    expect(held).toEqual({ known: true, secret: expect.any(Secret), how: 'rotated', rotationId: 'ingest@r2', at, store: false });
    expect(held?.known && held.secret.reveal()).toBe('xaat-c4n4ry-current');
  });

  it('sealed with a previous key, or plain once a key is set: known, and to be sealed again with the current key', () => {
    const old = newStateKey();
    const value = sealSecret(new Secret('xaat-c4n4ry-old-key'), old, sealContext('ingest', 'tok-2'));
    expect(heldSecretOf(holding(value), { current: newStateKey(), previous: [old] })).toMatchObject({ known: true, store: true });
    expect(heldSecretOf(holding({ plain: 'xaat-c4n4ry-plain' }), { current: newStateKey(), previous: [] })).toMatchObject({
      known: true,
      store: true,
    });
    expect(heldSecretOf(holding({ plain: 'xaat-c4n4ry-plain' }), { current: undefined, previous: [] })).toMatchObject({
      known: true,
      store: false,
    });
  });

  it('sealed, and no key given: a key error naming the key that sealed it and where to give it; never a reason to rotate', () => {
    const sealer = newStateKey();
    const value = sealSecret(new Secret('xaat-c4n4ry-sealed'), sealer, sealContext('ingest', 'tok-2'));
    const attempt = () => heldSecretOf(holding(value), { current: undefined, previous: [] });
    expect(attempt).toThrow(StateKeyError);
    expect(attempt).toThrow(keyIdOf(sealer));
    expect(attempt).toThrow(/ROTATOR_STATE_KEY_PREVIOUS/);
  });

  it('sealed with a key none of the run’s opens: a key error listing the ids tried, the one that sealed it, and the way out', () => {
    const sealer = newStateKey();
    const [current, previous] = [newStateKey(), newStateKey()];
    const value = sealSecret(new Secret('xaat-c4n4ry-sealed'), sealer, sealContext('ingest', 'tok-2'));
    let error: unknown;
    try {
      heldSecretOf(holding(value), { current, previous: [previous] });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(StateKeyError);
    const { message } = error as Error;
    expect(message).toContain(`(ids ${keyIdOf(current)}, ${keyIdOf(previous)})`);
    expect(message).toContain(keyIdOf(sealer));
    expect(message).toContain('ROTATOR_STATE_KEY_PREVIOUS');
    expect(message).toContain('token-rotator rotate ingest');
    // With no current key, only the previous ones are listed.
    expect(() => heldSecretOf(holding(value), { current: undefined, previous: [previous] })).toThrow(`(ids ${keyIdOf(previous)})`);
  });

  it('a sealed secret moved from another name or id does not open', () => {
    const key = newStateKey();
    const value = sealSecret(new Secret('xaat-c4n4ry-elsewhere'), key, sealContext('billing', 'tok-2'));
    expect(() => heldSecretOf(holding(value), { current: key, previous: [] })).toThrow(StateKeyError);
  });
});

describe('the current secret adopted from the sinks when the state holds none', () => {
  const keys: StateKeys = { current: newStateKey(), previous: [] };
  const contents = (entries: Record<string, string>) => new Map(Object.entries(entries).map(([t, s]) => [t, new Secret(s)]));
  const adopting = (...targets: string[]) => ({
    drift: [],
    adopt: targets.map((target) => ({ target, sink: target, fingerprint: 'f' })),
  });

  it('first sight, every sink agreeing: adopted now, known by an adoption id, to be stored', () => {
    const found = currentSecretFor(record(), true, adopting('a', 'b'), contents({ a: 'xaat-c4n4ry-s', b: 'xaat-c4n4ry-s' }), keys, now);
    expect(found).toEqual({
      known: true,
      secret: expect.any(Secret),
      how: 'adopted',
      rotationId: `ingest@adopted:${now.toISOString()}`,
      at: now.toISOString(),
      store: true,
    });
    expect(found.known && found.secret.reveal()).toBe('xaat-c4n4ry-s');
  });

  it('sinks holding different secrets: unknown, as which one works cannot be told', () => {
    const found = currentSecretFor(record(), true, adopting('a', 'b'), contents({ a: 'xaat-c4n4ry-1', b: 'xaat-c4n4ry-2' }), keys, now);
    expect(found).toEqual({ known: false, why: expect.stringContaining('different secrets') });
  });

  it('nothing to adopt: unknown, saying whether this is the name’s first sight', () => {
    expect(currentSecretFor(record(), true, adopting(), contents({}), keys, now)).toEqual({
      known: false,
      why: expect.stringContaining('first sight'),
    });
    expect(currentSecretFor(record(), false, adopting(), contents({}), keys, now)).toEqual({
      known: false,
      why: expect.not.stringContaining('first sight'),
    });
  });

  it('an older record (fingerprints, no secret): only a sink holding what it was given is adopted', () => {
    const given = (secret: string) => ({ fingerprint: fingerprintOf(new Secret(secret), keys.current), at, how: 'delivered' as const });
    const legacy = record({ sinks: { a: given('xaat-c4n4ry-given'), b: given('xaat-c4n4ry-given'), c: given('xaat-c4n4ry-given') } });
    // b was overwritten since, c lost its secret: a alone is adopted.
    const found = currentSecretFor(legacy, false, adopting('b'), contents({ a: 'xaat-c4n4ry-given', b: 'xaat-c4n4ry-other' }), keys, now);
    expect(found).toMatchObject({ known: true, how: 'adopted', store: true });
    expect(found.known && found.secret.reveal()).toBe('xaat-c4n4ry-given');

    const none = currentSecretFor(legacy, false, adopting(), contents({ b: 'xaat-c4n4ry-other' }), keys, now);
    expect(none).toEqual({ known: false, why: expect.stringContaining('no copy') });
  });

  it('stored, it is sealed with the current key for the name and current id', () => {
    const found = currentSecretFor(record(), true, adopting('a'), contents({ a: 'xaat-c4n4ry-stored' }), keys, now);
    if (!found.known) throw new Error('expected it known');
    const stored = storedCurrentSecret('ingest', 'tok-2', found, keys);
    expect(stored).toMatchObject({
      how: 'adopted',
      rotationId: found.rotationId,
      at: found.at,
      value: { sealed: { kid: keyIdOf(keys.current!) } },
    });
    const opened = openSecret(stored.value, keys, sealContext('ingest', 'tok-2'));
    expect(opened instanceof Secret && opened.reveal()).toBe('xaat-c4n4ry-stored');
    expect(openSecret(stored.value, keys, sealContext('ingest', 'tok-3'))).toBe('wrong-key');
  });
});

describe('a name seen for the first time keeps what its sinks hold', () => {
  it('the secret the sinks agree on is stored, so a sink that loses it later gets it again with no new token', async () => {
    const world = openWorld();
    const token = world.token('ingest', { expiresInMs: 60 * DAY });
    world.destinations.put('ingest-a', token.secret);
    world.destinations.put('ingest-b', token.secret);
    const key = newStateKey();
    expect(await rotateToken(token.policy, world.process({ stateKey: key }), { lockWaitMs: 0 })).toMatchObject({ action: 'skipped' });
    const raw = JSON.parse(world.storage.readRaw('state', 'ingest')!) as StateRecord;
    expect(raw.secret).toMatchObject({ how: 'adopted' });
    const opened = openSecret(raw.secret!.value, key, sealContext('ingest', token.id));
    expect(opened instanceof Secret && opened.reveal()).toBe(token.secret);

    world.destinations.lose('ingest-b');
    expect(await rotateToken(token.policy, world.process({ stateKey: key }), { lockWaitMs: 0 })).toMatchObject({ action: 'redelivered' });
    expect(world.service.regenerates).toEqual([]);
    expect(world.destinations.secret('ingest-b')).toBe(token.secret);
  });
});

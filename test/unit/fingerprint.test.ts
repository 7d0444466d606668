import { createHmac, createSecretKey } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { fingerprintOf, fingerprintsOf } from '../../src/policy/fingerprint.js';
import { Secret } from '../../src/secret.js';

/**
 * What the state keeps of a delivered secret: enough to tell whether a sink still holds it, never
 * the secret. Fingerprints written by an earlier release (unkeyed, or under an earlier key) must
 * still be recognised, so the scheme itself is pinned here.
 */
const secret = new Secret('xaat-fingerprint-canary-3e9d0c');
const other = new Secret('xaat-fingerprint-canary-other-77a1');
const keyA = createSecretKey(Buffer.from('state-key-a-canary-000000000000'));
const keyB = createSecretKey(Buffer.from('state-key-b-canary-000000000000'));
const unkeyed = `hmac-sha256:${createHmac('sha256', 'token-rotator sink fingerprint v1').update(secret.reveal()).digest('base64url')}`;

describe('fingerprintOf', () => {
  it('is the HMAC-SHA-256 of the secret under the fixed unkeyed key when no state key is set', () => {
    expect(fingerprintOf(secret, undefined)).toBe(unkeyed);
  });

  it('is the HMAC-SHA-256 under the state key when one is set', () => {
    expect(fingerprintOf(secret, keyA)).toBe(`hmac-sha256:${createHmac('sha256', keyA).update(secret.reveal()).digest('base64url')}`);
  });

  it("hashes a secret's UTF-8 bytes, as earlier releases did", () => {
    const accented = new Secret('pässwörd-canary-ünïcode-91');
    const bytes = Buffer.from('pässwörd-canary-ünïcode-91', 'utf8');
    expect(fingerprintOf(accented, keyA)).toBe(`hmac-sha256:${createHmac('sha256', keyA).update(bytes).digest('base64url')}`);
  });

  it('never contains the secret', () => {
    expect(fingerprintOf(secret, keyA)).not.toContain(secret.reveal());
  });

  it('tells secrets and keys apart', () => {
    const all = [fingerprintOf(secret, undefined), fingerprintOf(secret, keyA), fingerprintOf(secret, keyB), fingerprintOf(other, keyA)];
    expect(new Set(all).size).toBe(all.length);
  });

  it('is the same for the same secret and key', () => {
    expect(fingerprintOf(new Secret(secret.reveal()), keyA)).toBe(fingerprintOf(secret, keyA));
  });
});

describe('fingerprintsOf', () => {
  it('lists the current key first, then each previous key, then unkeyed', () => {
    expect(fingerprintsOf(secret, { current: keyA, previous: [keyB] })).toEqual([
      fingerprintOf(secret, keyA),
      fingerprintOf(secret, keyB),
      unkeyed,
    ]);
  });

  it('lists unkeyed once when no key is set', () => {
    expect(fingerprintsOf(secret, { current: undefined, previous: [] })).toEqual([unkeyed]);
  });

  it('lists a key given twice once', () => {
    expect(fingerprintsOf(secret, { current: keyA, previous: [keyA, keyB] })).toEqual([
      fingerprintOf(secret, keyA),
      fingerprintOf(secret, keyB),
      unkeyed,
    ]);
  });
});

import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';

import type { Secret } from '../secret.js';

/**
 * Used when no state key is set. A token is long and random, so even unkeyed its hash reveals
 * nothing that could be guessed; the key only adds that a fingerprint cannot be checked against a
 * candidate secret without it. A KeyObject, as the state key is: Node turns a Buffer key into one on
 * every createHmac, which made the unkeyed fingerprint 5× slower than a keyed one (a `plan` over
 * 5,000 tokens takes two of each per token).
 */
const UNKEYED = createSecretKey(Buffer.from('token-rotator sink fingerprint v1'));

/**
 * What the state keeps of a delivered secret: enough to tell whether a sink still holds it, never
 * enough to recover it. HMAC-SHA-256 of its UTF-8 bytes (Node's default for a string), keyed by
 * ROTATOR_STATE_KEY when set.
 */
export function fingerprintOf(secret: Secret, key: KeyObject | undefined): string {
  return `hmac-sha256:${createHmac('sha256', key ?? UNKEYED)
    .update(secret.reveal())
    .digest('base64url')}`;
}

/**
 * The fingerprints a secret may have been recorded under: the current key first (or unkeyed when
 * none is set), then each previous key, then unkeyed. A record written before a key was set or
 * changed still recognises its sinks.
 */
export function fingerprintsOf(secret: Secret, keys: { current: KeyObject | undefined; previous: readonly KeyObject[] }): string[] {
  const all = [keys.current, ...keys.previous, undefined].map((key) => fingerprintOf(secret, key));
  return [...new Set(all)];
}

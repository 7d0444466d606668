import { createCipheriv, createDecipheriv, createHmac, type KeyObject, randomBytes } from 'node:crypto';

import * as z from 'zod';

import { Secret } from '../secret.js';

/**
 * How a secret sits in state (a staged or held one in the journal, the current one in the record):
 * sealed with the state key, or plain in a 0600 file when no key is set. `kid` names the key that
 * sealed it (an id derived from the key, never the key), so a key ring opens it with the right one;
 * values sealed before key ids have none and are tried with every key.
 */
export const storedSecretSchema = z.union([
  z.strictObject({ plain: z.string().min(1) }),
  z.strictObject({
    sealed: z.strictObject({
      alg: z.literal('A256GCM'),
      kid: z.string().min(1).optional(),
      iv: z.string(),
      tag: z.string(),
      data: z.string(),
    }),
  }),
]);
export type StoredSecret = z.output<typeof storedSecretSchema>;

export type UnsealError = 'no-key' | 'wrong-key';

/**
 * The state keys of a run: the current one seals everything written from now on; previous ones
 * (ROTATOR_STATE_KEY_PREVIOUS) only open what they sealed, until it is written again.
 */
export interface StateKeys {
  current: KeyObject | undefined;
  previous: readonly KeyObject[];
}

export const noStateKeys: StateKeys = { current: undefined, previous: [] };

/**
 * Key ids by key, worked out once per key: every sealed secret and every MAC written or checked
 * names its key, some ten times a rotation, and a key's bytes never change.
 */
const keyIds = new WeakMap<KeyObject, string>();

/** A short public id for a key: which key sealed a value, said without saying the key. */
export function keyIdOf(key: KeyObject): string {
  let id = keyIds.get(key);
  if (id === undefined) {
    id = createHmac('sha256', key).update('token-rotator state key id v1', 'utf8').digest('base64url').slice(0, 12);
    keyIds.set(key, id);
  }
  return id;
}

/**
 * The last seal of each secret. A rotation stores its new secret twice, under the same key and
 * context: staged in the journal, then in the committed record; one seal serves both. The same
 * ciphertext for the same plaintext, key, nonce and context is no nonce reuse. Frozen, as two
 * documents hold it.
 */
const lastSeals = new WeakMap<Secret, { key: KeyObject; context: string; stored: StoredSecret }>();

/**
 * AES-256-GCM with a fresh 96-bit nonce per secret; `context` (the name and token id) is bound as
 * additional data, so a sealed secret cannot be moved to another entry unnoticed.
 */
export function sealSecret(secret: Secret, key: KeyObject | undefined, context: string): StoredSecret {
  if (!key) return { plain: secret.reveal() };
  const last = lastSeals.get(secret);
  if (last?.key === key && last.context === context) return last.stored;
  const stored = sealWith(secret, key, context);
  lastSeals.set(secret, { key, context, stored });
  return stored;
}

function sealWith(secret: Secret, key: KeyObject, context: string): StoredSecret {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const data = Buffer.concat([cipher.update(secret.reveal(), 'utf8'), cipher.final()]);
  return Object.freeze({
    sealed: Object.freeze({
      alg: 'A256GCM' as const,
      kid: keyIdOf(key),
      iv: iv.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
      data: data.toString('base64'),
    }),
  });
}

const keysOf = (keys: KeyObject | undefined | StateKeys): KeyObject[] =>
  keys === undefined ? [] : 'current' in keys ? [...(keys.current ? [keys.current] : []), ...keys.previous] : [keys];

/** Opens a stored secret with whichever key sealed it: the current key or a previous one. */
export function openSecret(stored: StoredSecret, keys: KeyObject | undefined | StateKeys, context: string): Secret | UnsealError {
  if ('plain' in stored) return new Secret(stored.plain);
  const ring = keysOf(keys);
  if (ring.length === 0) return 'no-key';
  const { kid } = stored.sealed;
  const candidates = kid ? ring.filter((key) => keyIdOf(key) === kid) : ring;
  for (const key of candidates) {
    const opened = openWith(stored.sealed, key, context);
    if (opened) return opened;
  }
  return 'wrong-key';
}

function openWith(sealed: Extract<StoredSecret, { sealed: unknown }>['sealed'], key: KeyObject, context: string): Secret | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    const plain = Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final()]);
    return new Secret(plain.toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * Whether a stored secret is as the current key would store it now: sealed by that key (or plain
 * when there is none). Anything else is sealed again at its name's next write, so a previous key
 * can be dropped once every name has been through a run.
 */
export function sealedAsCurrent(stored: StoredSecret, current: KeyObject | undefined): boolean {
  if (!current) return 'plain' in stored;
  return 'sealed' in stored && stored.sealed.kid === keyIdOf(current);
}

/** "sealed with key id abc…" / "plain": for messages, never the key or the secret. */
export function describeSeal(stored: StoredSecret): string {
  if ('plain' in stored) return 'stored plain (no state key was set)';
  return stored.sealed.kid ? `sealed with the key whose id is ${stored.sealed.kid}` : 'sealed with a key from before key ids';
}

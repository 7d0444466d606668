import { createHmac, createSecretKey, hkdfSync, type KeyObject, timingSafeEqual } from 'node:crypto';

import canonicalize from 'canonicalize';
import * as z from 'zod';

import { keyIdOf } from './secret-box.js';

/**
 * What authenticates a stored document as a whole (every field: ids, phase, name, lineage, the
 * sealed secret): an HMAC-SHA256 under a key derived from the state key, over the document's
 * canonical JSON (RFC 8785) without this field, bound to what the document is and whose.
 * `kid` names the state key it was made with, as a sealed secret's does.
 */
export const documentMacSchema = z.strictObject({
  alg: z.literal('HS256'),
  kid: z.string().min(1),
  value: z.string().min(1),
});
export type DocumentMac = z.output<typeof documentMacSchema>;

/** The two kinds of stored document: a name's record and its journal entry. */
export type DocumentKind = 'record' | 'journal';

const MAC_KEY_INFO = 'token-rotator state authentication v1';
const macKeys = new WeakMap<KeyObject, KeyObject>();

/** A key for MACs only, derived from the state key, so one key never serves two algorithms. */
function macKeyOf(stateKey: KeyObject): KeyObject {
  let key = macKeys.get(stateKey);
  if (!key) {
    key = createSecretKey(Buffer.from(hkdfSync('sha256', stateKey.export(), Buffer.alloc(0), MAC_KEY_INFO, 32)));
    macKeys.set(stateKey, key);
  }
  return key;
}

function macBytes(kind: DocumentKind, name: string, document: object, stateKey: KeyObject): Buffer {
  const { mac: _ignored, ...rest } = document as { mac?: unknown };
  return createHmac('sha256', macKeyOf(stateKey))
    .update(`token-rotator:${kind}:${name}\n`, 'utf8')
    .update(canonicalize(rest) ?? '', 'utf8')
    .digest();
}

/** The MAC of a document about to be written under `stateKey`. */
export function macOf(kind: DocumentKind, name: string, document: object, stateKey: KeyObject): DocumentMac {
  return { alg: 'HS256', kid: keyIdOf(stateKey), value: macBytes(kind, name, document, stateKey).toString('base64url') };
}

/** Whether `mac` is the MAC of the document under `stateKey` (compared in constant time). */
export function macMatches(kind: DocumentKind, name: string, document: object, mac: DocumentMac, stateKey: KeyObject): boolean {
  const expected = macBytes(kind, name, document, stateKey);
  const given = Buffer.from(mac.value, 'base64url');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

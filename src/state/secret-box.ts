import { createCipheriv, createDecipheriv, type KeyObject, randomBytes } from 'node:crypto';

import { z } from 'zod';

import { Secret } from '../secret.js';

/** How a staged secret sits in the journal: sealed with the state key, or plain in a 0600 file. */
export const storedSecretSchema = z.union([
  z.strictObject({ plain: z.string().min(1) }),
  z.strictObject({
    sealed: z.strictObject({ alg: z.literal('A256GCM'), iv: z.string(), tag: z.string(), data: z.string() }),
  }),
]);
export type StoredSecret = z.output<typeof storedSecretSchema>;

export type UnsealError = 'no-key' | 'wrong-key';

/**
 * AES-256-GCM with a fresh 96-bit nonce per secret; `context` (the name and new id) is bound as
 * additional data, so a sealed secret cannot be moved to another entry unnoticed.
 */
export function sealSecret(secret: Secret, key: KeyObject | undefined, context: string): StoredSecret {
  if (!key) return { plain: secret.reveal() };
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const data = Buffer.concat([cipher.update(secret.reveal(), 'utf8'), cipher.final()]);
  return {
    sealed: { alg: 'A256GCM', iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), data: data.toString('base64') },
  };
}

export function openSecret(stored: StoredSecret, key: KeyObject | undefined, context: string): Secret | UnsealError {
  if ('plain' in stored) return new Secret(stored.plain);
  if (!key) return 'no-key';
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(stored.sealed.iv, 'base64'));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(Buffer.from(stored.sealed.tag, 'base64'));
    const plain = Buffer.concat([decipher.update(Buffer.from(stored.sealed.data, 'base64')), decipher.final()]);
    return new Secret(plain.toString('utf8'));
  } catch {
    return 'wrong-key';
  }
}

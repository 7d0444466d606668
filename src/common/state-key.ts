import { createSecretKey, type KeyObject } from 'node:crypto';

export const STATE_KEY_HELP = '32 bytes, base64 or hex (generate one with: openssl rand -base64 32)';

/** A state key from its text form, or an error message. Base64 (std or url) or hex, exactly 32 bytes. */
export function parseStateKey(text: string): KeyObject | string {
  const trimmed = text.trim();
  const bytes = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (bytes.length !== 32) return `must be ${STATE_KEY_HELP}`;
  return createSecretKey(bytes);
}

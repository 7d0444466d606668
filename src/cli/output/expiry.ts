/**
 * A token's expiry as the output says it. `never` (expiresAt null) is a fact the service told;
 * `unknown` (no expiresAt at all) is what is said of a token never checked, or whose check failed:
 * never shown as `never`, and never a healthy state.
 */
export type Expiry = { expiry: 'expires'; expiresAt: string } | { expiry: 'never'; expiresAt: null } | { expiry: 'unknown' };

export function expiryOf(value: string | null | undefined, known: boolean): Expiry {
  if (!known || value === undefined) return { expiry: 'unknown' };
  return value === null ? { expiry: 'never', expiresAt: null } : { expiry: 'expires', expiresAt: value };
}

/** `2026-11-24T12:24Z`: minutes are enough to read a table; the JSON keeps full precision. */
export function shortDate(iso: string | null | undefined): string {
  if (iso === undefined) return '-';
  if (iso === null) return 'never';
  return `${iso.slice(0, 16)}Z`;
}

export function showExpiry(value: Expiry): string {
  return value.expiry === 'unknown' ? 'unknown' : shortDate(value.expiresAt);
}

/** `1 token`, `2 tokens`. */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

import type { ServiceToken } from '../api/service-token.js';

/**
 * How far the new token's expiry may be from what was asked: services round expiries (to the
 * second, the minute, some to the day). Further than this, the token is not what the rotation asked
 * for (a lifetime capped by the service, a token that never expires when an expiry was asked).
 */
export const EXPIRY_ROUNDING_MS = 24 * 3600_000;

export interface RetrieveExpectation {
  newId: string;
  /** The name the service gave the replaced token; undefined when this run never saw it. */
  serviceName: string | undefined;
  /** `newTokenExpiresAt` as sent with the regenerate; null when none was asked. */
  askedExpiresAt: Date | null;
}

/**
 * Whether the token the service now answers for the new id is the one the rotation made: the id
 * asked for, the replaced token's name. Undefined when it is; else why not. Only what breaks
 * consumers fails verification: an expiry other than asked does not (see `expiryWarning`).
 */
export function retrievedProblem(expected: RetrieveExpectation, got: ServiceToken): string | undefined {
  if (got.id !== expected.newId) return `the service answered token ${got.id} for ${expected.newId}`;
  if (expected.serviceName !== undefined && got.name !== expected.serviceName) {
    return `token ${got.id} is named '${got.name}', not '${expected.serviceName}' like the token it replaces`;
  }
  return undefined;
}

/**
 * The new token works, but not for as long as asked (a service that caps lifetimes), or never
 * expires though an expiry was asked: worth a warning, never a reason to keep the secret staged.
 * The schedule follows the expiry the service gave (maxAge still bounds one that never expires).
 */
export function expiryWarning(expected: RetrieveExpectation, got: ServiceToken): string | undefined {
  const asked = expected.askedExpiresAt;
  if (asked === null) return undefined;
  if (got.expiresAt === null) return `token ${got.id} never expires, but ${asked.toISOString()} was asked`;
  const off = got.expiresAt.getTime() - asked.getTime();
  if (Math.abs(off) > EXPIRY_ROUNDING_MS) {
    return `token ${got.id} expires ${got.expiresAt.toISOString()}, not ${asked.toISOString()} as asked`;
  }
  return undefined;
}

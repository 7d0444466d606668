import * as z from 'zod';

import { isTokenId, tokenIdProblem } from '../common/token-id.js';

/** A token as the service describes it, with `expiresAt` normalised (null: never expires). */
export interface ServiceToken {
  id: string;
  name: string;
  expiresAt: Date | null;
}

/** The two times a regenerate sends, under the service's own names. */
export interface RotationTimes {
  /** When the replaced token stops working. */
  existingTokenExpiresAt: Date;
  /** When the new token stops working; null: it never expires. */
  newTokenExpiresAt: Date | null;
}

export const tokenBodySchema = z.looseObject({
  id: z.string().min(1),
  name: z.string(),
  expiresAt: z.string().nullable().optional(),
});

/** The latest date the service and our state can both write: ISO 8601 with a four-digit year. */
const LATEST_DATE_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * The service says "never expires" three ways: null, absent, and Go's zero time
 * (`0001-01-01T00:00:00Z`). Any date in year 1 is taken as the zero time. A date past year 9999
 * (`+020000-01-01T00:00:00Z`) is a valid JavaScript date but no ISO 8601 date we could store or
 * send back: it is as unreadable as garbage.
 */
export function parseExpiry(value: unknown): Date | null | 'invalid' {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value !== 'string') return 'invalid';
  const date = new Date(value);
  if (Number.isNaN(date.getTime()) || date.getTime() > LATEST_DATE_MS) return 'invalid';
  if (date.getUTCFullYear() <= 1) return null;
  return date;
}

/** What a 200 answer to regenerate gave us: only `token` and `id` are needed to keep the secret. */
export type RegenerateAnswer =
  /** The secret, and an id we can track it by. `oddities` are details we took a best guess at. */
  | { kind: 'usable'; id: string; token: string; expiresAt: Date | null | 'invalid'; name: string | undefined; oddities: string[] }
  /** The secret, but no id we can use: it must be kept, and can be neither delivered nor tracked. */
  | { kind: 'untrackable'; token: string; problem: string }
  /** A `token` field with nothing usable in it: the service acted, and the secret is lost. */
  | { kind: 'unusable-token'; problem: string }
  /** No `token` field at all: whether the service acted is unknown. */
  | { kind: 'no-token' };

const describeValue = (value: unknown) => (value === undefined ? 'absent' : value === null ? 'null' : `a ${typeof value}`);

/**
 * Reads a regenerate answer as leniently as keeping the secret demands and no more. The secret is
 * the only copy of a new credential: an odd `name` or `expiresAt` must not throw it away.
 */
export function readRegenerateAnswer(body: unknown): RegenerateAnswer {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { kind: 'no-token' };
  const fields = body as Record<string, unknown>;
  if (!('token' in fields) || fields.token === undefined) return { kind: 'no-token' };
  const token = fields.token;
  if (typeof token !== 'string' || token === '') {
    return { kind: 'unusable-token', problem: `its token field is ${token === '' ? 'empty' : describeValue(token)}` };
  }

  const oddities: string[] = [];
  let id = fields.id;
  if (typeof id === 'number' && Number.isSafeInteger(id)) {
    oddities.push('id is a number');
    id = String(id);
  }
  if (!isTokenId(id)) {
    const problem =
      typeof id === 'string' ? `its id ${JSON.stringify(id.slice(0, 80))} ${tokenIdProblem(id)}` : `its id is ${describeValue(id)}`;
    return { kind: 'untrackable', token, problem };
  }
  const name = typeof fields.name === 'string' ? fields.name : undefined;
  if (name === undefined) oddities.push(`name is ${describeValue(fields.name)}`);
  const expiresAt = parseExpiry(fields.expiresAt);
  if (expiresAt === 'invalid')
    oddities.push(`expiresAt is ${typeof fields.expiresAt === 'string' ? 'not a date we can use' : describeValue(fields.expiresAt)}`);
  return { kind: 'usable', id, token, expiresAt, name, oddities };
}

import { z } from 'zod';

/** A token as the service describes it, with `expiresAt` normalised (null: never expires). */
export interface ServiceToken {
  id: string;
  name: string;
  expiresAt: Date | null;
}

export const tokenBodySchema = z.looseObject({
  id: z.string().min(1),
  name: z.string(),
  expiresAt: z.string().nullable().optional(),
});

export const regenerateBodySchema = tokenBodySchema.extend({
  token: z.string().min(1).optional(),
});

/**
 * The service says "never expires" three ways: null, absent, and Go's zero time
 * (`0001-01-01T00:00:00Z`). Any date in year 1 is taken as the zero time.
 */
export function parseExpiry(value: string | null | undefined): Date | null | 'invalid' {
  if (value === null || value === undefined || value === '') return null;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return 'invalid';
  if (date.getUTCFullYear() <= 1) return null;
  return date;
}

import * as z from 'zod';

import { durationSchema } from '../common/duration-schema.js';
import { isLoopbackHost } from '../common/loopback.js';
import { strictObject } from '../common/strict-object.js';

/** A probe of the new token itself, before anyone depends on it: `verify:` per token and in `defaults`. */
export interface VerifyProbe {
  /** Asked with `GET` and `Authorization: Bearer <new token>`. */
  url: URL;
  expectStatus: number[];
  timeoutMs: number;
  /** Tries after the first, spaced: services with eventual consistency may not know the token yet. */
  retries: number;
}

const url = z.string().transform((text, ctx) => {
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be a URL, such as https://api.example.com/v2/user' });
    return z.NEVER;
  }
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && isLoopbackHost(parsed.hostname))) {
    ctx.addIssue({ code: 'custom', message: 'must be an https:// URL (plain http only on loopback): the new token travels with it' });
    return z.NEVER;
  }
  if (parsed.username || parsed.password) {
    ctx.addIssue({ code: 'custom', message: 'must not hold credentials' });
    return z.NEVER;
  }
  return parsed;
});

export const verifyProbeSchema = strictObject({
  url,
  expectStatus: z
    .array(z.number().int().min(100, 'must be an HTTP status').max(599, 'must be an HTTP status'))
    .min(1, 'must name at least one status')
    .default([200]),
  timeout: durationSchema.pipe(z.number().min(1000, 'must be at least 1s').max(120_000, 'must be at most 2m')).default(10_000),
  retries: z.number().int().min(0).max(10, 'must be at most 10').default(3),
}).transform((probe): VerifyProbe => ({
  url: probe.url,
  expectStatus: probe.expectStatus,
  timeoutMs: probe.timeout,
  retries: probe.retries,
}));

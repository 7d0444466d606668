import cron from 'node-cron';
import * as z from 'zod';

import { DURATION_HELP, parseDuration } from '../common/duration.js';
import { durationSchema } from '../common/duration-schema.js';
import { strictObject } from '../common/strict-object.js';
import { tokenIdProblem } from '../common/token-id.js';
import { notificationSchema } from '../notify/notification-config.js';
import { verifyProbeSchema } from '../verify/verify-config.js';

const duration = durationSchema;

const renewBefore = z
  .string({ error: `must be ${DURATION_HELP}, or a share of the lifetime such as "33%"` })
  .transform((text, ctx): { kind: 'duration'; ms: number } | { kind: 'share'; percent: number } => {
    const share = /^(\d+(?:\.\d+)?)\s*%$/.exec(text.trim());
    if (share) {
      const percent = Number(share[1]);
      if (percent <= 0 || percent >= 100) {
        ctx.issues.push({ code: 'custom', message: 'a share must be between 0% and 100%, exclusive', input: text });
        return z.NEVER;
      }
      return { kind: 'share', percent };
    }
    const parsed = parseDuration(text);
    if (!parsed.ok) {
      ctx.issues.push({ code: 'custom', message: `${parsed.message}, or a share such as "33%"`, input: text });
      return z.NEVER;
    }
    return { kind: 'duration', ms: parsed.ms };
  });

// One transform rather than a union: a union would hide why a duration was refused (such as too long).
const lifetime = z.string({ error: `must be ${DURATION_HELP}, or "never"` }).transform((text, ctx): 'never' | number => {
  if (text.trim() === 'never') return 'never';
  const parsed = parseDuration(text);
  if (!parsed.ok) {
    ctx.issues.push({ code: 'custom', message: `${parsed.message}, or "never"`, input: text });
    return z.NEVER;
  }
  return parsed.ms;
});

// "never" (or null) turns it off even for a token that never expires; not set, such a token gets 90d.
const maxAge = z
  .string({ error: `must be ${DURATION_HELP}, or "never"` })
  .transform((text, ctx): number | null => {
    if (text.trim() === 'never') return null;
    const parsed = parseDuration(text);
    if (!parsed.ok) {
      ctx.issues.push({ code: 'custom', message: `${parsed.message}, or "never"`, input: text });
      return z.NEVER;
    }
    return parsed.ms;
  })
  .nullable();

/** 5 fields (minute first) or 6 (seconds first), as node-cron reads them. */
const schedule = z.string().superRefine((expression, ctx) => {
  const fields = expression.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6) {
    ctx.addIssue({
      code: 'custom',
      message: `'${expression}' has ${fields} fields; a cron schedule has 5 (minute hour day month weekday) or 6 (seconds first)`,
    });
    return;
  }
  const result = cron.validateDetailed(expression);
  if (!result.valid)
    ctx.addIssue({
      code: 'custom',
      message: `'${expression}' is not a cron schedule: ${result.errors.map((e) => `${e.field} ${e.message}`).join('; ')}`,
    });
});

const timezone = z.string().superRefine((zone, ctx) => {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
  } catch {
    ctx.addIssue({ code: 'custom', message: `'${zone}' is not an IANA time zone such as Europe/Berlin or UTC` });
  }
});

/**
 * Jitter becomes node-cron's maxRandomDelay, the bound of a random setTimeout, and Node fires a
 * timeout of more than 2^31-1 ms (about 24.8 days) after 1 ms: a longer jitter would often mean none.
 */
const MAX_JITTER_MS = 24 * 24 * 3600_000;

const jitter = duration.pipe(
  z.number().max(MAX_JITTER_MS, 'must be at most 24d: jitter is a timer delay, and a timer cannot wait longer than about 24.8 days'),
);

/** Each reload is checked by its own type's parser, so here only the shape of the list is. */
export const reloadListSchema = z
  .array(z.unknown(), { error: 'must be a list of reloads' })
  .describe("What to restart or call after each committed rotation; a token's list replaces the defaults' ([] turns them off).");

/** The rotation settings shared by `defaults` and each token; every one is optional in both places. */
export const settingsShape = {
  renewBefore: renewBefore
    .optional()
    .describe('Rotate when expiry is this close (a duration such as 7d), or a share of the lifetime such as "33%". Default 7d.'),
  overlap: duration
    .optional()
    .describe('How long the replaced token keeps working after a rotation (never longer than it would have). Default 1h.'),
  lifetime: lifetime.optional().describe('The new token\'s lifetime, or "never". Default 30d.'),
  maxAge: maxAge
    .optional()
    .describe(
      'Also rotate when the token is older than this (counted from the last rotation, else from when token-rotator first saw it). "never" or null: off. Not set: only tokens that never expire get one, 90d.',
    ),
  /**
   * What a check does when a sink does not hold the current secret (missing, another secret, new in
   * the policy): `redeliver` the secret the state holds (no new token), `rotate`, or only `report` it.
   */
  onDrift: z
    .enum(['redeliver', 'rotate', 'report'])
    .optional()
    .describe(
      'A sink that lacks the current secret: deliver the held current secret again (redeliver, default; no new token), rotate to repair it, or only report it.',
    ),
  /** When the daemon checks (cron); `once` ignores it. */
  schedule: schedule
    .optional()
    .describe('When the daemon checks: cron, 5 fields or 6 with seconds first. Default "*/15 * * * *". once ignores it.'),
  timezone: timezone.optional().describe('IANA time zone of the schedule, such as Europe/Berlin.'),
  /** A random delay of up to this much before each scheduled check, to spread load. */
  jitter: jitter.optional().describe('A random delay of up to this much before each scheduled check (at most 24d).'),
  /**
   * What to restart or call after a rotation is committed; a token's list replaces the defaults'
   * (`reload: []` turns them off). Each reload is checked by its own type's parser.
   */
  reload: reloadListSchema.optional(),
  /**
   * A probe of each new token before commit (GET with the new token as bearer); a token's own
   * replaces the defaults', `verify: null` turns it off. The built-in checks run without it.
   */
  verify: verifyProbeSchema
    .nullable()
    .optional()
    .describe(
      'Before commit, GET this URL with the new token as bearer: {url, expectStatus: [200], timeout: 10s, retries: 3}. null: none.',
    ),
};

export const TOKEN_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** The list of a token's sinks: each one is checked by its own type's parser, so here only the list is. */
export const sinkListSchema = z
  .array(z.unknown(), { error: 'must be a list of sinks' })
  .min(1, 'at least one sink is required: a rotated secret must be delivered somewhere')
  .describe('Where each new secret is delivered; at least one.');

export const tokenSchema = strictObject({
  name: z
    .string()
    .regex(TOKEN_NAME_PATTERN, 'must start with a letter or digit and hold only letters, digits, ".", "_" and "-" (at most 128)')
    .describe("Unique logical name; the token's id changes on every rotation, its name does not."),
  // The id goes into URLs as one path segment; `..` or `a/b` would address another resource.
  id: z
    .string()
    .superRefine((id, ctx) => {
      const problem = tokenIdProblem(id);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    })
    .describe("The token's id when first adopted; the current id lives in the state."),
  ...settingsShape,
  sinks: sinkListSchema,
});

export const defaultsSchema = strictObject(settingsShape).describe(
  'Rotation settings for every token; any of them can be overridden per token.',
);

export const policySchema = strictObject({
  // YAML reads `version: "1"` as text: say what is wrong with it, not only what is right.
  version: z
    .preprocess(
      (value, ctx) => {
        if (typeof value !== 'string' || value.trim() !== '1') return value;
        ctx.addIssue({ code: 'custom', message: 'must be the number 1, not the string "1": write version: 1 without quotes' });
        return z.NEVER;
      },
      z.literal(1, { error: 'must be 1' }),
    )
    .describe('The policy format: 1.'),
  defaults: defaultsSchema.optional(),
  notifications: z.array(notificationSchema).default([]).describe('Webhook or Slack notices of failures, orphans, drift and successes.'),
  tokens: z.array(tokenSchema, { error: 'must be a list of tokens' }).describe('The tokens to keep rotated.'),
});

export type RawPolicy = z.output<typeof policySchema>;
export type RawSettings = z.output<typeof defaultsSchema>;

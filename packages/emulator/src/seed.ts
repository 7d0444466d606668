import { readFile } from 'node:fs/promises';

import * as z from 'zod';

import { fromZodIssues } from '../common/config-issues.js';
import { durationSchema } from '../common/duration-schema.js';
import { yamlValue } from '../common/yaml-value.js';
import { ConfigError } from '../errors.js';

const duration = durationSchema;

/** What the emulator starts with: tokens (absolute or relative expiry), OAuth clients, static bearers. */
export const seedSchema = z.strictObject({
  tokens: z
    .array(
      z.strictObject({
        id: z.string().min(1).optional(),
        name: z.string().min(1),
        description: z.string().optional(),
        /** An ISO date, or null for a token that never expires. */
        expiresAt: z.string().nullable().optional(),
        /** Relative to the emulator's start, such as `2d`; used when expiresAt is absent. */
        expiresIn: duration.optional(),
      }),
    )
    .default([]),
  clients: z
    .array(
      z.strictObject({
        clientId: z.string().min(1),
        clientSecret: z.string().min(1).optional(),
        authMethod: z.enum(['client_secret_basic', 'client_secret_post', 'private_key_jwt']).default('client_secret_basic'),
        jwks: z.object({ keys: z.array(z.record(z.string(), z.unknown())) }).optional(),
        permissions: z.array(z.string()).optional(),
      }),
    )
    .default([]),
  personalTokens: z.array(z.strictObject({ token: z.string().min(8), orgId: z.string().min(1) })).default([]),
  rateLimitPerMinute: z.number().int().positive().optional(),
  latency: duration.optional(),
});

export type Seed = z.input<typeof seedSchema>;
export type ParsedSeed = z.output<typeof seedSchema>;

export function parseSeed(input: unknown, where = 'seed'): ParsedSeed {
  const parsed = seedSchema.safeParse(input ?? {}, { reportInput: true });
  if (!parsed.success) throw new ConfigError(fromZodIssues(parsed.error.issues, where));
  return parsed.data;
}

/** The seed file's data, checked by `startEmulator`. */
export async function loadSeedFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ConfigError([{ path, message: `cannot read seed file: ${(error as NodeJS.ErrnoException).code}` }]);
  }
  // The same reader as the policy: syntax and alias problems at file:line:col, never a stack trace.
  return yamlValue(text, path);
}

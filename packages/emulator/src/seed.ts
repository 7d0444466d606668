import { readFile } from 'node:fs/promises';

import * as z from 'zod';

import { durationSchema as duration } from './seed/duration.js';
import { seedIssues } from './seed/issues.js';
import { yamlFileValue } from './seed/yaml-file.js';
import { EmulatorUsageError } from './usage-error.js';

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
  if (!parsed.success) throw new EmulatorUsageError(seedIssues(parsed.error.issues, where));
  return parsed.data;
}

/** The seed file's data, checked by `startEmulator`. */
export async function loadSeedFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new EmulatorUsageError([{ path, message: `cannot read seed file: ${(error as NodeJS.ErrnoException).code}` }]);
  }
  return yamlFileValue(text, path);
}

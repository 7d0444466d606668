import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

import * as z from 'zod';

import { fromZodIssues } from '../../common/config-issues.js';
import { durationSchema } from '../../common/duration-schema.js';
import type { Env } from '../../common/env-variables.js';
import { strictObject } from '../../common/strict-object.js';
import type { ConfigIssue } from '../../errors.js';
import { FILE_FORMATS, type FileFormat } from '../file/file-format.js';
import type { SinkParseContext, SinkParseResult } from '../sink.js';
import { rotatorCredentialVariable } from './credential-variables.js';

export interface ExecSinkConfig {
  type: 'exec';
  /** The program and its arguments, as written: no shell. `command[0]` is resolved in `program`. */
  command: string[];
  /** The program's absolute path, found when the policy was read. */
  program: string;
  /** Prints what the destination holds now, for drift repair; without it the sink is write-only. */
  read?: { command: string[]; program: string };
  /** Checks, without writing, that a write could work: for `validate --online`. */
  preflight?: { command: string[]; program: string };
  /** What the program gets on stdin (and `read` prints): the file sink's formats. */
  format: FileFormat;
  envKey: string;
  timeoutMs: number;
  /** Variables of the rotator's environment the program may see, besides a minimal set. */
  passEnv: string[];
  /** The policy file's folder: the programs run there. */
  cwd: string;
}

const MAX_TIMEOUT_MS = 10 * 60_000;

const commandSchema = z
  .array(
    z.string().refine((part) => !part.includes('\0'), 'must not contain a NUL byte'),
    { error: 'must be a list: the program, then its arguments (no shell)' },
  )
  .min(1, 'must name a program')
  .refine((command) => command[0] !== '', 'the program must not be empty');

// Exported for the policy's JSON Schema (src/config/policy-json-schema.ts), which editors check against.
export const schema = strictObject({
  type: z.literal('exec'),
  command: commandSchema,
  read: commandSchema.optional(),
  preflight: commandSchema.optional(),
  format: z.enum(FILE_FORMATS).default('raw'),
  envKey: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
    .optional(),
  timeout: durationSchema.pipe(z.number().min(1000, 'must be at least 1s').max(MAX_TIMEOUT_MS, 'must be at most 10m')).default(30_000),
  passEnv: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')).default([]),
});

export function parseExecSinkConfig(raw: unknown, context: SinkParseContext): SinkParseResult<ExecSinkConfig> {
  const parsed = schema.safeParse(raw, { reportInput: true });
  if (!parsed.success) return { ok: false, issues: fromZodIssues(parsed.error.issues) };
  const { command, read, preflight, format, envKey, timeout, passEnv } = parsed.data;
  const issues: ConfigIssue[] = [];
  if (envKey !== undefined && format !== 'env') issues.push({ path: 'envKey', message: 'only used with format: env' });
  issues.push(...passEnvIssues(passEnv));
  const env = context.env ?? process.env;
  const program = findProgram(command[0]!, context.policyDir, env, 'command[0]', issues);
  const reader = read ? findProgram(read[0]!, context.policyDir, env, 'read[0]', issues) : undefined;
  const checker = preflight ? findProgram(preflight[0]!, context.policyDir, env, 'preflight[0]', issues) : undefined;
  if (issues.length > 0 || !program) return { ok: false, issues };
  return {
    ok: true,
    config: {
      type: 'exec',
      command,
      program,
      ...(read && reader ? { read: { command: read, program: reader } } : {}),
      ...(preflight && checker ? { preflight: { command: preflight, program: checker } } : {}),
      format,
      envKey: envKey ?? 'AXIOM_TOKEN',
      timeoutMs: timeout,
      passEnv,
      cwd: context.policyDir,
    },
  };
}

/**
 * The program is given none of the rotator's own settings and credentials, whatever passEnv says: a
 * program that logs its environment, or is not what it claims, must not hold what the rotator holds.
 * Credentials the policy names elsewhere (a Vault sink's tokenFrom) are checked across the policy
 * (pass-env-references.ts).
 */
function passEnvIssues(passEnv: readonly string[]): ConfigIssue[] {
  return passEnv.flatMap((name, index) => {
    const why = rotatorCredentialVariable(name);
    return why ? [{ path: `passEnv[${index}]`, message: `${why}: never passed to a program; give it credentials of its own` }] : [];
  });
}

/**
 * As a shell would find it, without a shell: a name with a `/` is a path (relative to the policy
 * file's folder), a bare name is looked up in PATH. Missing or not executable is a configuration
 * problem, found before any network call.
 */
function findProgram(name: string, policyDir: string, env: Env, at: string, issues: ConfigIssue[]): string | undefined {
  const candidates = name.includes('/')
    ? [isAbsolute(name) ? name : resolve(policyDir, name)]
    : (env.PATH ?? '')
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, name));
  for (const candidate of candidates) {
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      continue;
    }
  }
  issues.push({
    path: at,
    message: name.includes('/') ? `${name} is not an executable file` : `${name} is not an executable program in PATH`,
  });
  return undefined;
}

/** `exec push-token --name ingest`: the command as written, for tables, logs and errors. */
export const describeExec = (config: ExecSinkConfig) => `exec ${config.command.join(' ')}`;

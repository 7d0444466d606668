import { resolve } from 'node:path';

import * as z from 'zod';

import { fromZodIssues } from '../../common/config-issues.js';
import { strictObject } from '../../common/strict-object.js';
import type { ConfigIssue } from '../../errors.js';
import type { SinkParseContext, SinkParseResult } from '../sink.js';
import { FILE_FORMATS, type FileFormat } from './file-format.js';
import { inspectDestination } from './inspect-destination.js';

export interface FileSinkConfig {
  type: 'file';
  /** Absolute and normalised, resolved against the policy file's folder: where writes go. */
  path: string;
  /** Where `path` leads with links resolved, as found when the policy was read: its identity. */
  realPath: string;
  /** As written in the policy, for messages. */
  displayPath: string;
  format: FileFormat;
  envKey: string;
  mode: number;
  /** Follow symbolic links in `path`; without it a link anywhere in the path is refused. */
  allowSymlinks: boolean;
}

/** Linux and macOS both stop at 255 bytes for one name (NAME_MAX). */
const MAX_NAME_BYTES = 255;

// Exported for the policy's JSON Schema (src/config/policy-json-schema.ts), which editors check against.
export const schema = strictObject({
  type: z.literal('file'),
  path: z
    .string()
    .min(1, 'must not be empty')
    .refine((path) => !path.includes('\0'), 'must not contain a NUL byte (\\0); no file system accepts one in a path')
    .refine(
      (path) => path.split('/').every((name) => Buffer.byteLength(name) <= MAX_NAME_BYTES),
      `has a component longer than ${MAX_NAME_BYTES} bytes, which file systems do not accept`,
    )
    .refine((path) => !path.endsWith('/'), 'ends with /; path must name a file, not a folder'),
  format: z.enum(FILE_FORMATS).default('raw'),
  key: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name (letters, digits, _)')
    .optional(),
  mode: z
    .string()
    .regex(/^0?[0-7]{3}$/, "must be an octal file mode such as '0600' or '0640'")
    .refine((mode) => (parseInt(mode, 8) & 0o007) === 0, 'must not give other users access to a secret')
    .refine((mode) => (parseInt(mode, 8) & 0o600) === 0o600, 'must let the owner read and write')
    .default('0600'),
  allowSymlinks: z.boolean().default(false),
});

export function parseFileSinkConfig(raw: unknown, context: SinkParseContext): SinkParseResult<FileSinkConfig> {
  const parsed = schema.safeParse(raw, { reportInput: true });
  if (!parsed.success) return { ok: false, issues: fromZodIssues(parsed.error.issues) };
  const { path: displayPath, format, key, mode, allowSymlinks } = parsed.data;
  const issues: ConfigIssue[] = [];
  if (key !== undefined && format !== 'env') issues.push({ path: 'key', message: 'only used with format: env' });

  // resolve() also normalises an absolute path: `a//b/./c` and `a/b/c` are one destination.
  const path = resolve(context.policyDir, displayPath);
  const destination = inspectDestination(path, allowSymlinks);
  issues.push(...destination.issues);
  if (issues.length > 0) return { ok: false, issues };
  return {
    ok: true,
    config: {
      type: 'file',
      path,
      realPath: destination.realPath,
      displayPath,
      format,
      envKey: key ?? 'AXIOM_TOKEN',
      mode: parseInt(mode, 8),
      allowSymlinks,
    },
  };
}

import { isAbsolute, relative, resolve } from 'node:path';

import { z } from 'zod';

import { fromZodIssues } from '../../config/issues.js';
import { strictObject } from '../../config/strict-object.js';
import { SinkError } from '../../errors.js';
import { writeFileAtomic } from '../../fs/atomic-write.js';
import type { Secret } from '../../secret.js';
import type { Sink, SinkFactory } from '../sink.js';
import { FILE_FORMATS, type FileFormat, renderFile } from './file-format.js';

export interface FileSinkConfig {
  type: 'file';
  /** Absolute, resolved against the policy file's folder. */
  path: string;
  /** As written in the policy, for messages. */
  displayPath: string;
  format: FileFormat;
  envKey: string;
  mode: number;
}

const schema = strictObject({
  type: z.literal('file'),
  path: z.string().min(1, 'must not be empty'),
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
});

export const fileSinkFactory: SinkFactory<FileSinkConfig> = {
  type: 'file',

  parse(raw, context) {
    const parsed = schema.safeParse(raw, { reportInput: true });
    if (!parsed.success) return { ok: false, issues: fromZodIssues(parsed.error.issues) };
    const { path, format, key, mode } = parsed.data;
    if (key !== undefined && format !== 'env') {
      return { ok: false, issues: [{ path: 'key', message: 'only used with format: env' }] };
    }
    return {
      ok: true,
      config: {
        type: 'file',
        path: isAbsolute(path) ? path : resolve(context.policyDir, path),
        displayPath: path,
        format,
        envKey: key ?? 'AXIOM_TOKEN',
        mode: parseInt(mode, 8),
      },
    };
  },

  target: (config) => `file:${config.path}`,

  create: (config) => new FileSink(config),
};

class FileSink implements Sink {
  constructor(private readonly config: FileSinkConfig) {}

  describe(): string {
    return `file ${this.config.displayPath}`;
  }

  async write(secret: Secret, meta: Parameters<Sink['write']>[1]) {
    const content = renderFile(this.config.format, secret, meta, this.config.envKey);
    try {
      return await writeFileAtomic(this.config.path, content, { mode: this.config.mode });
    } catch (error) {
      throw new SinkError(`cannot write ${this.describe()}: ${describeFsError(error, this.config.path)}`, {
        cause: error,
      });
    }
  }
}

/** File system errors name the path and the errno, which is what an operator needs to act. */
function describeFsError(error: unknown, path: string): string {
  const e = error as NodeJS.ErrnoException;
  if (e?.code === 'EREFUSED') return e.message;
  const where = e?.path ? relative(process.cwd(), e.path) || e.path : path;
  switch (e?.code) {
    case 'EACCES':
    case 'EPERM':
      return `permission denied (${where})`;
    case 'ENOSPC':
      return 'no space left on device';
    case 'ENOTDIR':
    case 'EEXIST':
      return `a file is in the way of a folder (${where})`;
    case 'EROFS':
      return `read-only file system (${where})`;
    default:
      return e?.code ? `${e.code} (${where})` : String(e?.message ?? error);
  }
}

import { parse as parseDotenv } from 'dotenv';

import { SinkError } from '../../errors.js';
import { Secret } from '../../secret.js';
import type { SinkContent, TokenMeta } from '../sink.js';

export const FILE_FORMATS = ['raw', 'env', 'json'] as const;
export type FileFormat = (typeof FILE_FORMATS)[number];

const BARE_ENV_VALUE = /^[A-Za-z0-9_\-.:/+=@~]*$/;

/**
 * The ways to write a value, most readable first. dotenv takes single- and backquoted values
 * literally, expands only `\n` and `\r` in double quotes (it unescapes nothing else, not even `\"`),
 * and turns every CR in the file into LF before it parses; so no one form holds every value.
 */
const ENV_FORMS: ReadonlyArray<(value: string) => string | undefined> = [
  (value) => (BARE_ENV_VALUE.test(value) ? value : undefined),
  (value) => (value.includes("'") ? undefined : `'${value}'`),
  (value) => (value.includes('`') ? undefined : `\`${value}\``),
  (value) => (value.includes('"') || /\\[nr]/.test(value) ? undefined : `"${value.replace(/\n/g, '\\n').replace(/\r/g, '\\r')}"`),
];

/**
 * A line for the `dotenv` package's parser, the reader this format is for (other `.env` readers
 * quote differently: docker's `--env-file`, for one, keeps quotes as part of the value). The first
 * form that this very parser reads back unchanged is written, so its quirks cannot alter a secret;
 * a secret that no form keeps is refused rather than written changed.
 */
function envLine(key: string, value: string): string {
  for (const form of ENV_FORMS) {
    const written = form(value);
    if (written === undefined) continue;
    const line = `${key}=${written}\n`;
    const readBack = parseDotenv(line);
    if (Object.keys(readBack).length === 1 && readBack[key] === value) return line;
  }
  throw new SinkError(
    'the secret cannot be written in env format without changing it (no dotenv quoting keeps every character it has); use format raw or json',
  );
}

/** The exact bytes a file sink writes. `raw` has no trailing newline: many readers do not trim. */
export function renderFile(format: FileFormat, secret: Secret, meta: TokenMeta, envKey: string): string {
  switch (format) {
    case 'raw':
      return secret.reveal();
    case 'env':
      return envLine(envKey, secret.reveal());
    case 'json':
      // The metadata beside the token is what a lost state is recovered from (newest rotation wins).
      return `${JSON.stringify({
        name: meta.name,
        id: meta.id,
        expiresAt: meta.expiresAt ? meta.expiresAt.toISOString() : null,
        rotationId: meta.rotationId,
        rotatedAt: meta.rotatedAt.toISOString(),
        token: secret.reveal(),
      })}\n`;
  }
}

/**
 * What a file holds, read as its format writes it; undefined when it is empty. Content that does not
 * hold a secret in this format (no key, not JSON) is content without a secret: not ours to adopt.
 */
export function parseFileContent(format: FileFormat, text: string, envKey: string): SinkContent | undefined {
  if (text === '') return undefined;
  switch (format) {
    case 'raw':
      return { secret: new Secret(text) };
    case 'env': {
      const value = parseDotenv(text)[envKey];
      return { secret: value ? new Secret(value) : undefined };
    }
    case 'json': {
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        return { secret: undefined };
      }
      const text_ = (key: string) => (typeof body[key] === 'string' ? (body[key] as string) : undefined);
      const token = text_('token');
      return {
        secret: token ? new Secret(token) : undefined,
        meta: {
          ...(text_('name') !== undefined ? { name: text_('name') } : {}),
          ...(text_('id') !== undefined ? { id: text_('id') } : {}),
          ...(text_('expiresAt') !== undefined || body.expiresAt === null ? { expiresAt: text_('expiresAt') ?? null } : {}),
          ...(text_('rotationId') !== undefined ? { rotationId: text_('rotationId') } : {}),
          ...(text_('rotatedAt') !== undefined ? { rotatedAt: text_('rotatedAt') } : {}),
        },
      };
    }
  }
}

import { parse as parseDotenv } from 'dotenv';

import { SinkError } from '../../errors.js';
import type { Secret } from '../../secret.js';
import type { TokenMeta } from '../sink.js';

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
      return `${JSON.stringify({
        name: meta.name,
        id: meta.id,
        expiresAt: meta.expiresAt ? meta.expiresAt.toISOString() : null,
        token: secret.reveal(),
      })}\n`;
  }
}

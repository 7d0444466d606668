import type { Secret } from '../../secret.js';
import type { TokenMeta } from '../sink.js';

export const FILE_FORMATS = ['raw', 'env', 'json'] as const;
export type FileFormat = (typeof FILE_FORMATS)[number];

const BARE_ENV_VALUE = /^[A-Za-z0-9_\-.:/+=@~]*$/;

/** Double-quoted in the dotenv dialect that `dotenv`, docker and systemd read alike. */
function envValue(value: string): string {
  if (BARE_ENV_VALUE.test(value)) return value;
  return `"${value.replace(/[\\"$`]/g, (c) => `\\${c}`).replace(/\n/g, '\\n')}"`;
}

/** The exact bytes a file sink writes. `raw` has no trailing newline: many readers do not trim. */
export function renderFile(format: FileFormat, secret: Secret, meta: TokenMeta, envKey: string): string {
  switch (format) {
    case 'raw':
      return secret.reveal();
    case 'env':
      return `${envKey}=${envValue(secret.reveal())}\n`;
    case 'json':
      return `${JSON.stringify({
        name: meta.name,
        id: meta.id,
        expiresAt: meta.expiresAt ? meta.expiresAt.toISOString() : null,
        token: secret.reveal(),
      })}\n`;
  }
}

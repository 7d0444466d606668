import { type DestinationStream, type Logger as PinoLogger, pino } from 'pino';

import { scrubSecrets } from '../secret.js';

export type Logger = PinoLogger;

/**
 * Field names that hold secrets wherever they appear. Secrets are also `Secret` objects that print
 * as [REDACTED], and every known secret value is scrubbed from each line before it is written:
 * three layers, because one forgotten path is all a leak takes.
 */
const REDACT_PATHS = [
  'secret',
  'token',
  'accessToken',
  'clientSecret',
  'authorization',
  'headers.authorization',
  '*.secret',
  '*.token',
  '*.accessToken',
  '*.clientSecret',
  '*.authorization',
  '*.headers.authorization',
];

export function createLogger(options: { level: string; destination?: DestinationStream }): Logger {
  return pino(
    {
      level: options.level,
      base: { app: 'token-rotator' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      hooks: { streamWrite: scrubSecrets },
    },
    // Synchronous, so that the last lines before an exit (or a crash) are not lost.
    options.destination ?? pino.destination({ fd: 2, sync: true }),
  );
}

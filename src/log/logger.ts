import { createRequire } from 'node:module';

import type { DestinationStream, Logger as PinoLogger } from 'pino';

import { RotatorError } from '../errors.js';
import { scrubSecrets } from '../secret.js';

export type Logger = PinoLogger;

/**
 * pino and pino-pretty are loaded on the first logger, not with this module: `--version`, `--help`
 * and `validate` log only when there is something to say, and pino-pretty (29 modules) is loaded only
 * when pretty lines are chosen.
 * Both are CommonJS, so `require` keeps createLogger synchronous.
 */
const require = createRequire(import.meta.url);
const loadPino = (): typeof import('pino') => require('pino') as typeof import('pino');

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

export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** How a process writes its logs: chosen once, at the CLI's entry, from the option, the variable and the terminal. */
export interface LogOutput {
  format: 'json' | 'pretty';
  colour: boolean;
}

let output: LogOutput = { format: 'json', colour: false };

/**
 * `auto` is human-readable lines on a terminal and JSON lines anywhere else (a pipe, a file, a log
 * collector), as kubectl and gh choose; colours only on a terminal and never with NO_COLOR set.
 */
export function chooseLogOutput(format: LogFormat, stderr: { isTTY?: boolean }, env: Record<string, string | undefined>): LogOutput {
  const terminal = stderr.isTTY === true;
  const pretty = format === 'pretty' || (format === 'auto' && terminal);
  return { format: pretty ? 'pretty' : 'json', colour: pretty && terminal && !env['NO_COLOR'] && env['TERM'] !== 'dumb' };
}

export function setLogOutput(chosen: LogOutput): void {
  output = chosen;
}

/** Lines for a person: time, level, message, then the fields on the same line; synchronous like the JSON. */
function prettyStream(colour: boolean): DestinationStream {
  const { PinoPretty } = require('pino-pretty') as typeof import('pino-pretty');
  return PinoPretty({
    destination: 2,
    sync: true,
    colorize: colour,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname,app',
  });
}

/**
 * An expected failure (a RotatorError: the service refused, a sink is down) is logged with its code
 * and message only; its stack trace says where our code noticed it, which helps nobody on call, so
 * it is kept for `debug` and `trace`. Anything else is a bug, and keeps its stack at every level.
 */
function errorSerializer(pino: typeof import('pino').pino, level: string) {
  const traces = level === 'debug' || level === 'trace';
  return (error: unknown) => {
    const serialized = pino.stdSerializers.err(error as Error) as unknown as Record<string, unknown>;
    if (!traces && error instanceof RotatorError) {
      delete serialized['stack'];
      // A cause is kept as its message: the expected failure beneath (ECONNREFUSED, a TLS refusal).
      const cause = serialized['cause'] as Record<string, unknown> | undefined;
      if (cause && typeof cause === 'object') delete cause['stack'];
    }
    return serialized;
  };
}

export function createLogger(options: { level: string; destination?: DestinationStream }): Logger {
  const { pino } = loadPino();
  return pino(
    {
      serializers: { err: errorSerializer(pino, options.level) },
      level: options.level,
      base: { app: 'token-rotator' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      hooks: { streamWrite: scrubSecrets },
    },
    // Synchronous, so that the last lines before an exit (or a crash) are not lost.
    options.destination ?? (output.format === 'pretty' ? prettyStream(output.colour) : pino.destination({ fd: 2, sync: true })),
  );
}

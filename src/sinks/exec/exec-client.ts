import { access, constants } from 'node:fs/promises';

import { formatDuration } from '../../common/duration.js';
import type { Env } from '../../common/env-variables.js';
import { SinkError } from '../../errors.js';
import { remoteText } from '../../http/remote-text.js';
import type { Logger } from '../../log/logger.js';
import { REDACTED } from '../../scrub/masked-text.js';
import { scrubSecrets, type Secret } from '../../secret.js';
import { parseFileContent, renderFile } from '../file/file-format.js';
import type { SinkClient, SinkOpenContext, TokenMeta } from '../sink.js';
import { metadataValues } from '../token-metadata.js';
import { describeExec, type ExecSinkConfig } from './exec-sink-config.js';
import { type LeftBehind, OUTPUT_GRACE_MS, type ProgramResult, runProgram } from './run-program.js';

/**
 * What every program may see of the rotator's environment: enough to run, none of its credentials.
 * Nothing else of it reaches the program: its environment is built from these, passEnv (which
 * refuses the rotator's own settings and credentials) and the TOKEN_ROTATOR_* values.
 */
const BASE_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR'];
const RESULTS = ['created', 'updated', 'unchanged'] as const;

/** The token's metadata, as the program's environment carries it. */
const META_VARIABLES = {
  tokenName: 'TOKEN_ROTATOR_NAME',
  tokenId: 'TOKEN_ROTATOR_ID',
  expiresAt: 'TOKEN_ROTATOR_EXPIRES_AT',
  rotationId: 'TOKEN_ROTATOR_ROTATION_ID',
  rotatedAt: 'TOKEN_ROTATOR_ROTATED_AT',
};

type Operation = 'write' | 'read' | 'preflight';

export function execSinkClient(context: SinkOpenContext): SinkClient<ExecSinkConfig> {
  const envFor = (config: ExecSinkConfig, operation: Operation, meta?: TokenMeta): Record<string, string> => ({
    ...pick(context.env, [...BASE_ENV, ...config.passEnv]),
    TOKEN_ROTATOR_OPERATION: operation,
    TOKEN_ROTATOR_FORMAT: config.format,
    ...(meta ? metadataValues(meta, META_VARIABLES) : {}),
  });
  /** Runs one of the config's programs for `operation`; anything but exit 0 in time is a SinkError. */
  const runOrFail = async (
    config: ExecSinkConfig,
    command: readonly string[],
    operation: Operation,
    signal: AbortSignal | undefined,
    given: { input?: string; meta?: TokenMeta; secret?: Secret } = {},
  ): Promise<ProgramResult> => {
    const result = await run(config, command[0]!, command.slice(1), {
      ...(given.input !== undefined ? { input: given.input } : {}),
      env: envFor(config, operation, given.meta),
      signal,
      operation,
      logger: context.logger,
    });
    failUnlessZero(config, result, operation, given.secret);
    return result;
  };

  return {
    async write(config, secret, meta, { signal }) {
      signal?.throwIfAborted();
      let input: string;
      try {
        input = renderFile(config.format, secret, meta, config.envKey);
      } catch (error) {
        throw new SinkError(`cannot write ${describeExec(config)}: ${(error as Error).message}`, { cause: error });
      }
      const result = await runOrFail(config, [config.program, ...config.command.slice(1)], 'write', signal, { input, meta, secret });
      // The program may say what it did on its first line; anything else counts as a change.
      const said = result.stdout.split('\n', 1)[0]!.trim();
      return (RESULTS as readonly string[]).includes(said) ? (said as (typeof RESULTS)[number]) : 'updated';
    },

    async read(config, { signal }) {
      signal?.throwIfAborted();
      if (!config.read) return undefined; // write-only: the sink type says so, and nobody asks
      const result = await runOrFail(config, [config.read.program, ...config.read.command.slice(1)], 'read', signal);
      return parseFileContent(config.format, result.stdout, config.envKey);
    },

    async preflight(config, { signal }) {
      for (const program of [config.program, ...[config.read, config.preflight].flatMap((c) => (c ? [c.program] : []))]) {
        try {
          await access(program, constants.X_OK);
        } catch {
          throw new SinkError(`${describeExec(config)}: ${program} is not there or not executable any more`);
        }
      }
      // Only a program made for it is asked: the write program might take an empty stdin for a secret.
      if (!config.preflight) return;
      await runOrFail(config, [config.preflight.program, ...config.preflight.command.slice(1)], 'preflight', signal);
    },

    async close() {},
  };
}

function pick(env: Env, names: readonly string[]): Record<string, string> {
  return Object.fromEntries(names.flatMap((name) => (env[name] !== undefined ? [[name, env[name]!]] : [])));
}

async function run(
  config: ExecSinkConfig,
  program: string,
  args: string[],
  options: { input?: string; env: Record<string, string>; signal: AbortSignal | undefined; operation: Operation; logger: Logger },
): Promise<ProgramResult> {
  try {
    return await runProgram(program, args, {
      env: options.env,
      cwd: config.cwd,
      timeoutMs: config.timeoutMs,
      ...(options.input !== undefined ? { input: options.input } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      onLeftBehind: (left) => reportLeftBehind(options.logger, config, options.operation, left),
    });
  } catch (error) {
    if ((error as Error)?.name === 'AbortError') throw error;
    throw new SinkError(
      `${describeExec(config)} could not be started: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
}

/**
 * What a program left running after it ended, killed: said as a warning, with pids and never
 * anything of the processes' own (their arguments may hold what the program was given). The
 * write's own result stands on the program's exit.
 */
function reportLeftBehind(logger: Logger, config: ExecSinkConfig, operation: Operation, left: LeftBehind): void {
  const fields = { sink: describeExec(config), operation, outputHeld: left.outputHeld };
  const held = left.outputHeld ? `, holding its output open ${formatDuration(OUTPUT_GRACE_MS)} after it ended` : '';
  if (left.killed.length > 0) {
    logger.warn(
      { ...fields, killed: left.killed },
      `${operation} through ${describeExec(config)}: the program left ${left.killed.length} process(es) running${held}; killed them`,
    );
  } else if (left.outputHeld) {
    const where =
      left.searched === 'every-process'
        ? 'by a process that could not be found (it left its session and cleared its environment)'
        : 'by a process outside its process group, which cannot be searched for on this system; its group was killed';
    logger.warn(
      fields,
      `${operation} through ${describeExec(config)}: its output was held open after it ended, ${where}; stopped reading it`,
    );
  }
}

/**
 * A failed program, said with its exit and the end of what it wrote to stderr: masked like any
 * peer's text. A careless program may echo the secret, also wrapped (`fold`), encoded (`base64`) or
 * in part: all of stderr is scrubbed before its end is taken, so that a cut cannot hide one.
 */
function failUnlessZero(config: ExecSinkConfig, result: ProgramResult, operation: string, secret?: Secret): void {
  if (result.code === 0 && !result.timedOut) return;
  const how = result.timedOut
    ? `did not finish within ${formatDuration(config.timeoutMs)}`
    : result.signal
      ? `was killed by ${result.signal}`
      : `exited with ${result.code}`;
  // The secret it was given, also if too short for scrubbing (which would mangle words), as ever.
  const given = secret?.reveal();
  const stderr = given ? result.stderr.split(given).join(REDACTED) : result.stderr;
  const said = remoteText(scrubSecrets(stderr).trim().split('\n').slice(-3).join(' '));
  throw new SinkError(`${operation} through ${describeExec(config)} failed: the program ${how}${said ? `: ${said}` : ''}`);
}

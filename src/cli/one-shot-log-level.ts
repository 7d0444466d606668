import type { LogLevel } from '../config/env.js';

/**
 * The log level of a one-shot command (`once`, `plan`, `rotate`) when ROTATOR_LOG_LEVEL is not set.
 * At a terminal a person reads its table on stdout, and the steps it logs on stderr (about eight
 * INFO lines per rotated token) would bury it: there it logs warnings and errors only, and `-v`
 * gives the steps back. Anywhere else (CI, a CronJob's log, a pipe) those lines are the record of
 * the run and stay at info, as the daemon's always do. undefined: the usual default.
 */
export function oneShotLogLevel(stderr: { isTTY?: boolean }, verbose: boolean | undefined): LogLevel | undefined {
  return stderr.isTTY === true && !verbose ? 'warn' : undefined;
}

export const VERBOSE_HELP = 'at a terminal, log each step too (level info); ROTATOR_LOG_LEVEL sets any level, anywhere';

import { CommanderError } from 'commander';

import { EmulatorUsageError } from '../usage-error.js';
import { EXIT } from './io.js';

/** The exit code for what the command threw, said on stderr: one line, no stack trace unless unexpected. */
export function reportError(error: unknown, io: { stderr: { write(text: string): unknown } }): number {
  if (error instanceof CommanderError) {
    return error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  if (error instanceof EmulatorUsageError) {
    io.stderr.write(`token-rotator-emulator: ${error.message}\n`);
    return EXIT.usage;
  }
  io.stderr.write(`token-rotator-emulator: unexpected error: ${(error as Error)?.stack ?? String(error)}\n`);
  return EXIT.failed;
}

import { type Env } from '../common/env-variables.js';

/** What a command may touch of the process: injected, so `run()` can be driven in-process by tests. */
export interface CliIo {
  /** Only read to ask for confirmation, and only when it is a TTY. */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: { write(text: string): unknown; isTTY?: boolean };
  stderr: { write(text: string): unknown; isTTY?: boolean };
  env: Env;
  cwd: string;
}

export const EXIT = {
  ok: 0,
  /** Some token failed; the others were still processed. */
  failed: 1,
  /** Usage or configuration error, found before any network call. */
  usage: 2,
} as const;

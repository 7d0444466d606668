import { type Env } from '../common/env-variables.js';

/** What a command may touch of the process: injected, so `run()` can be driven in-process by tests. */
export interface CliIo {
  /** Only read to ask for confirmation, and only when it is a TTY. */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  /** `columns`: the terminal's width, which tables are fitted to. */
  stdout: { write(text: string): unknown; isTTY?: boolean; columns?: number };
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
  /**
   * Nothing could be checked: a dependency every token shares failed (the token service or the
   * authorization server unreachable, a TLS refusal, credentials refused). Said once, with what to check.
   */
  dependency: 3,
  /** Stopped by SIGINT (128 + 2), or by SIGTERM (128 + 15): not a failure; the next run takes up what was interrupted. */
  interrupted: 130,
  terminated: 143,
} as const;

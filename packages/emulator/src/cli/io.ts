/** What the emulator's command may touch of the process: injected, so that tests can drive it in-process. */
export interface EmulatorIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  env: Record<string, string | undefined>;
  cwd: string;
}

/** The emulator's exit codes: the product's for the same meanings. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

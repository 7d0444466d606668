import { spawn } from 'node:child_process';

import { killLeftBehind, type LeftBehind, newRunMarker, outputPipesOf, RUN_MARKER_VARIABLE } from './left-behind.js';

export type { LeftBehind };

/** What a program left: its exit, and what it printed (each stream cut at a bound). */
export interface ProgramResult {
  /** null when it was killed, or never seen to end (see OUTPUT_GRACE_MS). */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

const MAX_OUTPUT_BYTES = 1024 * 1024;
/** After SIGTERM at the timeout, this long before SIGKILL. */
const KILL_GRACE_MS = 5_000;
/**
 * How long the output may stay open once the program has exited (or been killed). Only a process
 * it started keeps it open then; past this, the rotator closes its end, stops waiting, and kills
 * whatever the program left (see left-behind.ts). Long enough for a pipe's last bytes, short beside
 * any timeout.
 */
export const OUTPUT_GRACE_MS = 2_000;

/**
 * Runs a program without a shell, `input` on its stdin, in a session and process group of its own,
 * marked by a run id in its environment. It ends when the program has exited and its output is
 * closed, or OUTPUT_GRACE_MS after it exited; then nothing it started is left running, and
 * `onLeftBehind` hears what was (also when the run is stopped). The timeout sends SIGTERM to its
 * group, SIGKILL KILL_GRACE_MS later. An abort (the stop's deadline) kills the group at once and
 * rejects with the signal's reason once the program is gone.
 */
export function runProgram(
  program: string,
  args: readonly string[],
  options: {
    input?: string;
    env: Record<string, string>;
    cwd: string;
    timeoutMs: number;
    signal?: AbortSignal;
    onLeftBehind?: (left: LeftBehind) => void;
  },
): Promise<ProgramResult> {
  options.signal?.throwIfAborted();
  const marker = newRunMarker();
  return new Promise((done, fail) => {
    const child = spawn(program, args, {
      cwd: options.cwd,
      env: { ...options.env, [RUN_MARKER_VARIABLE]: marker },
      stdio: ['pipe', 'pipe', 'pipe'],
      // setsid(): its own session and process group, led by the program.
      detached: true,
    });
    const pipes = outputPipesOf(child.pid);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let timedOut = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let finished = false;
    let killTimer: NodeJS.Timeout | undefined;
    let graceTimer: NodeJS.Timeout | undefined;
    // Only while the program is not reaped is its pid surely still its group's id.
    const signalGroup = (signal: NodeJS.Signals) => {
      if (exit || child.pid === undefined) return;
      try {
        process.kill(-child.pid, signal);
      } catch {
        // gone already
      }
    };
    /** Once the output closes, or the grace after exit (or after a kill) runs out. */
    const waitForOutput = () => {
      clearTimeout(graceTimer);
      graceTimer = setTimeout(() => finish(true), OUTPUT_GRACE_MS);
    };
    /** The one way out: false when the run was already over. */
    const settle = (): boolean => {
      if (finished) return false;
      finished = true;
      clearTimeout(timer);
      clearTimeout(killTimer);
      clearTimeout(graceTimer);
      options.signal?.removeEventListener('abort', onAbort);
      return true;
    };
    const finish = (outputHeld: boolean) => {
      if (!settle()) return;
      // Our ends of its pipes: whoever still holds theirs writes to nobody now.
      for (const stream of [child.stdin, child.stdout, child.stderr]) stream.destroy();
      const heldPipes = outputHeld ? pipes : [];
      void killLeftBehind({ leader: child.pid!, leaderReaped: exit !== undefined, marker, heldPipes })
        .then((left) => options.onLeftBehind?.({ ...left, outputHeld }))
        // A search that failed (a bug, an odd /proc) is no reason to hang: the run ends all the same.
        .catch(() => undefined)
        .finally(() => {
          if (options.signal?.aborted) {
            fail(options.signal.reason);
            return;
          }
          done({
            code: exit?.code ?? null,
            signal: exit?.signal ?? null,
            stdout: Buffer.concat(out).toString('utf8'),
            stderr: Buffer.concat(err).toString('utf8'),
            timedOut,
          });
        });
    };
    const timer = setTimeout(() => {
      timedOut = true;
      signalGroup('SIGTERM');
      killTimer = setTimeout(() => {
        signalGroup('SIGKILL');
        // A process that does not end at SIGKILL (stuck in the kernel) is not waited for forever.
        waitForOutput();
      }, KILL_GRACE_MS);
    }, options.timeoutMs);
    const onAbort = () => {
      if (exit) {
        finish(false);
        return;
      }
      signalGroup('SIGKILL');
      waitForOutput();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (chunk: Buffer) => {
      if (outBytes < MAX_OUTPUT_BYTES) out.push(chunk);
      outBytes += chunk.length;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (errBytes < MAX_OUTPUT_BYTES) err.push(chunk);
      errBytes += chunk.length;
    });
    // A program that exits without reading its stdin closes the pipe: not our failure to report.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
    // Not started (no such program, not executable): there is nothing to wait for or to kill.
    child.on('error', (error) => {
      if (settle()) fail(error);
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      clearTimeout(timer);
      clearTimeout(killTimer);
      if (options.signal?.aborted) finish(false);
      else waitForOutput();
    });
    // Exited, and every pipe closed by everyone who held it: the usual end.
    child.on('close', () => finish(false));
  });
}

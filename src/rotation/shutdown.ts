import type { Logger } from '../log/logger.js';

/**
 * A stop asked of a run (SIGTERM, SIGINT, the daemon's `stop`), in two moments:
 * - `stopping` aborts at once: no name is started any more, and no regenerate is sent any more
 *   (a name already being worked on still finishes what needs no new regenerate);
 * - `abort` aborts at the deadline: requests and sink operations still waiting are given up. A
 *   regenerate already sent is never given up: its answer may carry the only copy of the new
 *   secret, so it runs to its answer or its own timeout (ROTATOR_HTTP_TIMEOUT), and an unanswered
 *   one is left to the journal, reconciled by the next run.
 */
export interface Shutdown {
  readonly stopping: AbortSignal;
  readonly abort: AbortSignal;
  /** What asked for the stop (the signal's name), once asked. */
  readonly reason: string | undefined;
  /** Asks for the stop; `abort` follows after `deadlineMs`. A second call changes nothing. */
  stop(reason: string, deadlineMs: number): void;
  /** Clears the deadline's timer (the run is over). */
  dispose(): void;
}

/** setTimeout and clearTimeout, injected so tests fire them; a timer is unref'd when it can be. */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(timer: never): void;
}

/** Never what keeps the process alive: the run ending is what ends it. */
export function unref(timer: unknown): void {
  (timer as { unref?: () => unknown } | undefined)?.unref?.();
}

/** Thrown where a name would have begun new work with the service after the stop was asked. */
export class RotationStopped extends Error {
  /** `what`: what was not done, such as "due (expires in 2 days), not rotated". */
  constructor(what: string) {
    super(`${what}: the rotator is stopping; the next run takes it up`);
    this.name = 'RotationStopped';
  }
}

export function createShutdown(timers: Timers = globalThis as unknown as Timers): Shutdown {
  const stopping = new AbortController();
  const abort = new AbortController();
  let reason: string | undefined;
  let timer: unknown;
  return {
    stopping: stopping.signal,
    abort: abort.signal,
    get reason() {
      return reason;
    },
    stop(why, deadlineMs) {
      if (reason !== undefined) return;
      reason = why;
      // Default reasons (an AbortError): clients and sinks recognise an abort by that name.
      stopping.abort();
      timer = timers.setTimeout(() => abort.abort(), deadlineMs);
      unref(timer);
    },
    dispose() {
      if (timer !== undefined) timers.clearTimeout(timer as never);
      timer = undefined;
    },
  };
}

/** The signals a stop is asked with, and the shell's exit status for each (128 + its number). */
const STOP_SIGNALS = { SIGINT: 130, SIGTERM: 143 } as const;
export type StopSignal = keyof typeof STOP_SIGNALS;

/** The exit status of a run stopped by `reason`, as a shell reports a process ended by that signal. */
export function exitCodeForStop(reason: string | undefined): number | undefined {
  // Any other reason (the daemon's `stop`, none) is no key of it: undefined.
  return STOP_SIGNALS[reason as StopSignal];
}

export interface SignalSource {
  on(event: StopSignal, listener: (signal: StopSignal) => void): unknown;
  off(event: StopSignal, listener: (signal: StopSignal) => void): unknown;
}

export interface StopSignalOptions {
  logger: Logger;
  signals?: SignalSource;
  exit?: (code: number) => void;
  /** Monotonic milliseconds (performance.now()); tests move it. */
  now?: () => number;
}

/**
 * A second signal this soon after the first is the same stop, not a second one: Ctrl-C under
 * `npm start` or `npx` reaches the process twice, microseconds apart (the terminal signals the
 * whole process group, and npm forwards its own copy), which would skip the graceful stop.
 */
export const SAME_STOP_WITHIN_MS = 500;

/**
 * The two-signal convention of every long command, as `terraform` and `kubectl` have it: the first
 * SIGTERM or SIGINT goes to `onFirst` (the graceful stop), a second one, of either kind, ends the
 * process at once with 128 + its number: the journal lets the next run finish whatever this one had
 * started. A second signal within SAME_STOP_WITHIN_MS of the first counts as the same one. Returns
 * the function that removes the handlers.
 */
export function onStopSignals(onFirst: (signal: StopSignal) => void, options: StopSignalOptions): () => void {
  const source: SignalSource = options.signals ?? process;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const now = options.now ?? (() => performance.now());
  let receivedAt: number | undefined;
  const onSignal = (signal: StopSignal) => {
    if (receivedAt !== undefined) {
      if (now() - receivedAt < SAME_STOP_WITHIN_MS) return;
      options.logger.warn({ signal }, 'second stop signal: exiting now; the next run finishes what this one had started');
      exit(STOP_SIGNALS[signal]);
      return;
    }
    receivedAt = now();
    onFirst(signal);
  };
  for (const signal of Object.keys(STOP_SIGNALS) as StopSignal[]) source.on(signal, onSignal);
  return () => {
    for (const signal of Object.keys(STOP_SIGNALS) as StopSignal[]) source.off(signal, onSignal);
  };
}

/**
 * SIGTERM (a pod evicted, a CronJob's deadline) and SIGINT (Ctrl-C) stop the run gracefully; a second
 * one ends the process at once (see onStopSignals). Returns the function that removes the handlers.
 */
export function stopOnSignals(shutdown: Shutdown, options: StopSignalOptions & { deadlineMs: number }): () => void {
  return onStopSignals((signal) => {
    options.logger.warn(
      { signal, deadlineMs: options.deadlineMs },
      'stopping: no token is started any more; the ones in progress finish (send the signal again to exit at once)',
    );
    shutdown.stop(signal, options.deadlineMs);
  }, options);
}

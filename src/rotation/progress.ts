import type { Logger } from '../log/logger.js';
import { type Timers, unref } from './shutdown.js';

/** A pass shorter than this says nothing; a longer one says how far it is, then every `everyMs`. */
const FIRST_AFTER_MS = 2_000;
const EVERY_MS = 5_000;

export interface Progress {
  started(name: string): void;
  finished(name: string): void;
  /** The pass is over: no more lines. */
  stop(): void;
}

/**
 * "N of M tokens checked" at info while a pass lasts more than a moment, with the names still being
 * worked on (a hung one shows up there). The timers never keep the process alive.
 */
export function trackProgress(options: {
  total: number;
  logger: Logger;
  timers?: Timers;
  firstAfterMs?: number;
  everyMs?: number;
}): Progress {
  const timers = options.timers ?? (globalThis as unknown as Timers);
  const running = new Set<string>();
  let done = 0;
  let stopped = false;
  let timer: unknown;

  const arm = (ms: number) => {
    timer = timers.setTimeout(tick, ms);
    unref(timer);
  };
  function tick() {
    if (stopped) return;
    options.logger.info(
      { done, total: options.total, inProgress: [...running] },
      `${done} of ${options.total} ${options.total === 1 ? 'token' : 'tokens'} checked`,
    );
    arm(options.everyMs ?? EVERY_MS);
  }
  arm(options.firstAfterMs ?? FIRST_AFTER_MS);

  return {
    started: (name) => void running.add(name),
    finished(name) {
      running.delete(name);
      done++;
    },
    stop() {
      stopped = true;
      timers.clearTimeout(timer as never);
    },
  };
}

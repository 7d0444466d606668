import type { Timers } from '../../src/rotation/shutdown.js';

/** A timer a test fires by hand: its delay, whether it was cleared and whether it was unref'd. */
export interface ManualTimer {
  callback: () => void;
  ms: number;
  cleared: boolean;
  unrefd: boolean;
  unref: () => void;
}

/** Timers a test fires by hand (`fire` runs the last one armed), for code that takes `Timers`. */
export function manualTimers() {
  const armed: ManualTimer[] = [];
  const timers: Timers = {
    setTimeout(callback, ms) {
      const timer: ManualTimer = {
        callback,
        ms,
        cleared: false,
        unrefd: false,
        unref() {
          timer.unrefd = true;
        },
      };
      armed.push(timer);
      return timer;
    },
    clearTimeout(timer: never) {
      (timer as ManualTimer).cleared = true;
    },
  };
  return { timers, armed, fire: () => armed.at(-1)!.callback() };
}

import { setTimeout as sleep } from 'node:timers/promises';

import type { Logger } from '../log/logger.js';
import { onStopSignals, type SignalSource } from '../rotation/shutdown.js';

/**
 * Runs `draw` now and then every `intervalMs` after it ends, until SIGINT or SIGTERM: a watch is
 * stopped by a signal, which is how it ends, not a failure. A draw under way when the signal comes
 * finishes first (a second signal exits at once, as for every long command).
 */
export async function everyUntilStopped(
  intervalMs: number,
  draw: () => Promise<void>,
  options: { logger: Logger; signals?: SignalSource },
): Promise<void> {
  const stopped = new AbortController();
  const removeHandlers = onStopSignals(() => stopped.abort(), {
    logger: options.logger,
    ...(options.signals ? { signals: options.signals } : {}),
  });
  try {
    while (!stopped.signal.aborted) {
      await draw();
      await sleep(intervalMs, undefined, { signal: stopped.signal }).catch(() => undefined);
    }
  } finally {
    removeHandlers();
  }
}

import type { RotatedItem } from '../reload/run-reloads.js';
import type { TokenOutcome } from '../rotation/outcome.js';

/** A batch waits at most this long for the checks around it: a restart never waits on a slow neighbour for long. */
const MAX_WAIT_MS = 30_000;

/**
 * The daemon's reloads, batched as `once` batches them: rotations committed while other checks run
 * wait for those checks, then reload together, so that a workload consuming several tokens rotated
 * at one time restarts once. `done` gets each outcome with its reload results.
 */
export function reloadBatch(
  runReloads: (items: readonly RotatedItem[]) => Promise<TokenOutcome[]>,
  done: (outcome: TokenOutcome) => Promise<void>,
  options: { maxWaitMs?: number } = {},
) {
  let waiting: RotatedItem[] = [];
  let checks = 0;
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> = Promise.resolve();

  function flush(): Promise<void> {
    clearTimeout(timer);
    timer = undefined;
    const items = waiting;
    waiting = [];
    if (items.length === 0) return flushing;
    flushing = flushing.then(async () => {
      const outcomes = await runReloads(items);
      await Promise.all(outcomes.map(done));
    });
    return flushing;
  }

  return {
    /** Around every check: the batch goes when the last running check is done. */
    async around<T>(check: () => Promise<T>): Promise<T> {
      checks++;
      try {
        return await check();
      } finally {
        if (--checks === 0) await flush();
      }
    },
    add(item: RotatedItem): void {
      waiting.push(item);
      timer ??= setTimeout(() => void flush(), options.maxWaitMs ?? MAX_WAIT_MS);
    },
    /** At stop: what was committed is reloaded still. */
    flush,
  };
}

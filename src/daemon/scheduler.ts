import cron, { type ScheduledTask } from 'node-cron';

import type { TokenPolicy } from '../config/types.js';
import type { Logger } from '../log/logger.js';

/**
 * One node-cron task per token, on the token's own schedule and time zone, with node-cron's random
 * delay as jitter. A check of a name never starts while another check of that name runs, whether it
 * came from the schedule, the first check at start, or a reload.
 */
export class CheckScheduler {
  readonly #tasks = new Map<string, ScheduledTask>();
  readonly #running = new Map<string, Promise<void>>();
  #stopped = false;

  constructor(
    private readonly check: (token: TokenPolicy) => Promise<void>,
    private readonly logger: Logger,
    private readonly onScheduled: (name: string, next: Date | null) => void,
  ) {}

  /** Replaces every task with the given policy's: for start and for a reload. */
  schedule(tokens: TokenPolicy[]): void {
    for (const task of this.#tasks.values()) void task.destroy();
    this.#tasks.clear();
    for (const token of tokens) {
      const task = cron.createTask(token.schedule.expression, () => this.run(token), {
        name: token.name,
        timezone: token.schedule.timezone,
        noOverlap: true,
        maxRandomDelay: token.schedule.jitterMs,
      });
      this.#tasks.set(token.name, task);
      if (!this.#stopped) void task.start();
      this.onScheduled(token.name, task.getNextRun());
    }
  }

  /** Checks `token` now unless a check of it is already running; resolves when that check is done. */
  run(token: TokenPolicy): Promise<void> {
    const current = this.#running.get(token.name);
    if (current) {
      this.logger.debug({ tokenName: token.name }, 'a check of this name is already running');
      return current;
    }
    if (this.#stopped) return Promise.resolve();
    const running = this.check(token)
      .catch((error: unknown) => this.logger.error({ tokenName: token.name, err: error }, 'check failed unexpectedly'))
      .finally(() => {
        this.#running.delete(token.name);
        this.onScheduled(token.name, this.#tasks.get(token.name)?.getNextRun() ?? null);
      });
    this.#running.set(token.name, running);
    return running;
  }

  /** Starts no new check; resolves when the running ones are done. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const task of this.#tasks.values()) await task.stop();
    await Promise.allSettled([...this.#running.values()]);
    for (const task of this.#tasks.values()) await task.destroy();
  }
}

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { BUILT_IN_DEFAULTS } from '../../src/config/load-policy.js';
import type { TokenPolicy } from '../../src/config/types.js';
import { CheckScheduler } from '../../src/daemon/scheduler.js';
import { createLogger } from '../../src/log/logger.js';

const token = (name: string, expression: string): TokenPolicy => ({
  name,
  id: `${name}-id`,
  settings: BUILT_IN_DEFAULTS,
  schedule: { expression, timezone: 'UTC', jitterMs: 0 },
  sinks: [],
  reload: [],
  reloadAt: 'defaults.reload',
});
const silent = createLogger({ level: 'silent' });

describe('CheckScheduler', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: new Date('2026-11-22T12:00:00.500Z') });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('checks each token on its own schedule and reports the next run', async () => {
    const checks: string[] = [];
    const next = new Map<string, Date | null>();
    const scheduler = new CheckScheduler(
      async (t) => void checks.push(t.name),
      silent,
      (name, at) => next.set(name, at),
    );
    scheduler.schedule([token('fast', '*/5 * * * * *'), token('slow', '0 * * * *')]);
    expect(next.get('fast')).toEqual(new Date('2026-11-22T12:00:05.000Z'));
    expect(next.get('slow')).toEqual(new Date('2026-11-22T13:00:00.000Z'));
    await vi.advanceTimersByTimeAsync(20_000);
    expect(checks.filter((n) => n === 'fast')).toHaveLength(4);
    expect(checks.filter((n) => n === 'slow')).toHaveLength(0);
    await scheduler.stop();
  });

  it('never runs two checks of one token at once', async () => {
    let running = 0;
    let most = 0;
    const scheduler = new CheckScheduler(
      async () => {
        running += 1;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 12_000));
        running -= 1;
      },
      silent,
      () => undefined,
    );
    const t = token('slow-check', '*/2 * * * * *');
    scheduler.schedule([t]);
    void scheduler.run(t); // the first check at start
    await vi.advanceTimersByTimeAsync(30_000);
    expect(most).toBe(1);
    const stopping = scheduler.stop();
    await vi.advanceTimersByTimeAsync(12_000);
    await stopping;
  });

  it('starts nothing new once stopped, and waits for the check in flight', async () => {
    let finished = false;
    const scheduler = new CheckScheduler(
      async () => {
        await new Promise((resolve) => setTimeout(resolve, 3000));
        finished = true;
      },
      silent,
      () => undefined,
    );
    const t = token('a', '*/1 * * * * *');
    scheduler.schedule([t]);
    void scheduler.run(t);
    const stopping = scheduler.stop();
    await vi.advanceTimersByTimeAsync(3000);
    await stopping;
    expect(finished).toBe(true);
    finished = false;
    await scheduler.run(t);
    expect(finished).toBe(false);
  });
});

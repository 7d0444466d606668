import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { beforeEach, describe, expect, it, vi } from 'vitest';

import { fixedClock } from '../../src/clock.js';
import { fileNameLocks } from '../../src/state/backends/file/file-locks.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/**
 * The pause between two looks at a busy lock, taken on the injected clock: each pause moves it on
 * by the time asked for (a timer asked for no time waits a millisecond), and returns at once.
 */
const pauses = vi.hoisted(() => ({ clock: undefined as undefined | { advance(ms: number): void }, asked: [] as unknown[] }));
vi.mock('node:timers/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:timers/promises')>();
  const setTimeout = async (ms?: number) => {
    pauses.asked.push(ms);
    pauses.clock?.advance(typeof ms === 'number' && ms >= 1 ? ms : 1);
  };
  return { ...real, setTimeout, default: { ...real, setTimeout } };
});

describe('an acquire that waits for a busy lock', () => {
  let dir: string;
  const clock = fixedClock('2026-11-22T12:00:00.000Z');

  beforeEach(async () => {
    dir = await makeTempDir();
    await mkdir(join(dir, 'locks'));
    // Held by another host, and fresh for the whole wait.
    const file = join(dir, 'locks/a.lock');
    await writeFile(file, JSON.stringify({ pid: 4242, host: 'other-host', acquiredAt: '2026-11-22T11:00:00.000Z', nonce: 'theirs' }));
    await utimes(file, clock.now(), clock.now());
    pauses.clock = clock;
    pauses.asked.length = 0;
  });

  it('looks again every 50 ms by default, not in a busy loop, and gives up when the wait is over', async () => {
    const start = clock.now().getTime();
    expect(await fileNameLocks(dir, { clock, host: 'host-a' }).acquire('a', { waitMs: 5000 })).toEqual({
      busy: { who: 'pid 4242 on other-host', since: '2026-11-22T11:00:00.000Z' },
    });
    expect(clock.now().getTime() - start).toBe(5000);
    expect(pauses.asked, 'one pause between two looks').toHaveLength(100);
  });

  it('looks again as often as it is told to', async () => {
    await fileNameLocks(dir, { clock, host: 'host-a', pollMs: 500 }).acquire('a', { waitMs: 5000 });
    expect(pauses.asked).toHaveLength(10);
  });
});

import { mkdir, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { type Clock, fixedClock } from '../../src/clock.js';
import { fileNameLocks } from '../../src/state/backends/file/file-locks.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
/** The staleness window the product runs with: nothing in src/ sets another. */
const DEFAULT_STALE_MS = 2 * MINUTE;

/**
 * Production never sets the staleness window or the heartbeat: these tests take the lock with the
 * defaults only (a clock and, to play two hosts, a host name), and move the clock by hand.
 */
describe('name locks with their default staleness window and heartbeat', () => {
  let dir: string;
  const lockFile = () => join(dir, 'locks/a.lock');
  const mtime = async () => (await stat(lockFile())).mtimeMs;

  beforeEach(async () => {
    dir = await makeTempDir();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** Waits (real time, no bound on the outcome) until the heartbeat's write is on disk. */
  async function untilTouchedAt(at: number): Promise<void> {
    for (let tries = 0; Math.abs((await mtime()) - at) > 1; tries++) {
      if (tries > 2000) throw new Error(`the lock file was never touched at ${new Date(at).toISOString()}`);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  it('never lets another host take a lock over while its holder runs, however long it holds it', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    // Whole seconds from about now: the lock file is created with the real time as its mtime.
    const clock = fixedClock(new Date(Math.floor(Date.now() / SECOND) * SECOND));
    const holder = await fileNameLocks(dir, { clock, host: 'host-a' }).acquire('a', { waitMs: 0 });
    expect('held' in holder).toBe(true);
    const other = fileNameLocks(dir, { clock, host: 'host-b' });

    // Ten minutes, five staleness windows, looked at from the other host every ten seconds.
    for (let elapsed = 0; elapsed < 10 * MINUTE; elapsed += 10 * SECOND) {
      clock.advance(10 * SECOND);
      vi.advanceTimersByTime(10 * SECOND);
      expect(await other.acquire('a', { waitMs: 0 }), `after ${elapsed / SECOND + 10} s`).toEqual({
        busy: { who: `pid ${process.pid} on host-a`, since: expect.any(String) },
      });
    }
    if ('held' in holder) await holder.held.release();
    expect('held' in (await other.acquire('a', { waitMs: 0 }))).toBe(true);
  });

  it('touches a held lock well inside the staleness window, yet not every second', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    const clock: Clock = { now: () => new Date() }; // the faked Date: it moves with the timers
    const result = await fileNameLocks(dir, { clock, host: 'host-a' }).acquire('a', { waitMs: 0 });
    if (!('held' in result)) throw new Error('the lock is busy');

    let last = Date.now();
    for (let beat = 1; beat <= 4; beat++) {
      vi.advanceTimersToNextTimer();
      await untilTouchedAt(Date.now());
      const interval = Date.now() - last;
      expect(interval, `beat ${beat}`).toBeGreaterThanOrEqual(DEFAULT_STALE_MS / 8);
      expect(interval, `beat ${beat}`).toBeLessThanOrEqual(DEFAULT_STALE_MS / 2);
      last = Date.now();
    }
    await result.held.release();
  });

  it('takes over a lock from another host only once it was not touched for the staleness window', async () => {
    const clock = fixedClock('2026-11-22T12:00:00.000Z');
    await mkdir(join(dir, 'locks'), { recursive: true });
    const record = JSON.stringify({ pid: 4242, host: 'host-b', acquiredAt: '2026-11-22T11:00:00.000Z', nonce: 'theirs' });
    const touched = (ago: number) => new Date(clock.now().getTime() - ago);
    const locks = fileNameLocks(dir, { clock, host: 'host-a' });

    await writeFile(lockFile(), record);
    await utimes(lockFile(), touched(DEFAULT_STALE_MS / 2), touched(DEFAULT_STALE_MS / 2));
    expect(await locks.acquire('a', { waitMs: 0 })).toEqual({ busy: { who: 'pid 4242 on host-b', since: '2026-11-22T11:00:00.000Z' } });

    await utimes(lockFile(), touched(5 * DEFAULT_STALE_MS), touched(5 * DEFAULT_STALE_MS));
    const result = await locks.acquire('a', { waitMs: 0 });
    expect('held' in result).toBe(true);
    if ('held' in result) await result.held.release();
  });
});

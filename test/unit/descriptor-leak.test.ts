import { existsSync, readdirSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { fixedClock } from '../../src/clock.js';
import { CheckScheduler } from '../../src/daemon/scheduler.js';
import type { TokenOutcome } from '../../src/rotation/outcome.js';
import { rotateToken } from '../../src/rotation/rotate-token.js';
import { fileNameLocks } from '../../src/state/backends/file/file-locks.js';
import { openStateBackend } from '../../src/state/backends/registry.js';
import { DAY, fakeDeps, openWorld, silentLogger } from '../fakes/fake-deps.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/** This process's open file descriptors, as the kernel counts them. */
const openDescriptors = () => readdirSync('/proc/self/fd').length;

/**
 * A few descriptors may be opened lazily along the way (the thread pool, a module loaded on first
 * use) and count once; a leak counts once per cycle, and the cycles are many more than this.
 */
const SLACK = 8;

/**
 * A daemon runs for months: a descriptor left open per lock check, per heartbeat or per rotation
 * ends in EMFILE, and then in a daemon that can neither take a lock nor write its state.
 */
describe.runIf(existsSync('/proc/self/fd'))('no file descriptor is left open', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await makeTempDir();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('across many lock cycles: acquire, busy for another, assertHeld, heartbeat, release', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const clock = fixedClock(new Date(Math.floor(Date.now() / 1000) * 1000));
    const heartbeatMs = 1000;
    const locks = fileNameLocks(dir, { clock, heartbeatMs, host: 'host-a' });
    const other = fileNameLocks(dir, { clock, heartbeatMs, host: 'host-b' });
    const lockFile = join(dir, 'locks/a.lock');

    async function cycle(): Promise<void> {
      const result = await locks.acquire('a', { waitMs: 0 });
      if (!('held' in result)) throw new Error('the lock is busy');
      expect('busy' in (await other.acquire('a', { waitMs: 0 }))).toBe(true);
      for (let step = 0; step < 5; step++) await result.held.assertHeld();
      // One heartbeat, seen on disk: it touches the file with the clock's time.
      clock.advance(heartbeatMs);
      vi.advanceTimersByTime(heartbeatMs);
      for (let tries = 0; Math.abs((await stat(lockFile)).mtimeMs - clock.now().getTime()) > 1; tries++) {
        if (tries > 2000) throw new Error('the heartbeat never touched the lock');
        await new Promise((resolve) => setImmediate(resolve));
      }
      await result.held.release();
      await expect(result.held.assertHeld()).rejects.toMatchObject({ code: 'ERR_LOCK_LOST' });
    }

    for (let warmUp = 0; warmUp < 5; warmUp++) await cycle();
    const before = openDescriptors();
    for (let round = 0; round < 100; round++) await cycle();
    await new Promise((resolve) => setImmediate(resolve)); // the last heartbeat closes its file
    expect(openDescriptors() - before).toBeLessThanOrEqual(SLACK);
  });

  it("across many of the daemon's checks, each a rotation over the file backend", async () => {
    const world = openWorld();
    const logger = silentLogger();
    const backend = await openStateBackend('file', { dir, env: {}, clock: world.clock, logger });
    const deps = fakeDeps({ backend, api: world.service, sinks: world.destinations.open(logger), clock: world.clock });
    const { policy } = world.token('ingest', { expiresInMs: DAY });
    const outcomes: TokenOutcome[] = [];
    // The daemon's check of a name, as start-daemon.ts runs it: backoff respected, one at a time.
    const scheduler = new CheckScheduler(
      async (token) => void outcomes.push(await rotateToken(token, deps, { respectBackoff: true })),
      logger,
      () => undefined,
    );

    async function check(): Promise<void> {
      await scheduler.run(policy);
      world.clock.advance(24 * DAY); // the new token (30 days) is due again: within renewBefore (7 days)
    }

    for (let warmUp = 0; warmUp < 3; warmUp++) await check();
    const before = openDescriptors();
    for (let round = 0; round < 20; round++) await check();
    await scheduler.stop();
    expect(outcomes.map((o) => o.action)).toEqual(Array(23).fill('rotated'));
    expect(world.service.committed()).toHaveLength(23);
    expect(openDescriptors() - before).toBeLessThanOrEqual(SLACK);
  });
});

import { existsSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { fixedClock } from '../../src/clock.js';
import { LockLostError } from '../../src/errors.js';
import { fileJournal } from '../../src/state/backends/file/file-journal.js';
import { fileNameLocks, type LockOptions } from '../../src/state/backends/file/file-locks.js';
import type { HeldLock, LockResult } from '../../src/state/name-locks.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const SECOND = 1000;
/** The defaults: a lock untouched for two minutes is stale, a takeover guard for ten seconds. */
const STALE_MS = 120 * SECOND;
const GUARD_STALE_MS = 10 * SECOND;
const HOUR = 3600 * SECOND;

/**
 * How a lock, a takeover guard or a crashed process's debris is judged, with the clock injected and
 * every file's age set exactly: on the edges of each window, and in the races each look guards against.
 */
describe('name locks judge what they find', () => {
  let dir: string;
  let folder: string;
  const clock = fixedClock('2026-11-22T12:00:00.000Z');
  const lockFile = (name = 'a') => join(folder, `${name}.lock`);
  const guardFile = (name = 'a') => `${lockFile(name)}.takeover`;
  const locks = (options: Partial<LockOptions> = {}) => fileNameLocks(dir, { clock, ...options });
  const other = { pid: 4242, host: 'other-host', acquiredAt: '2026-11-22T11:00:00.000Z', nonce: 'theirs' };
  const busyWith = (owner: { pid: number; host: string; acquiredAt: string }) => ({
    busy: { who: `pid ${owner.pid} on ${owner.host}`, since: owner.acquiredAt },
  });

  beforeEach(async () => {
    dir = await makeTempDir();
    folder = join(dir, 'locks');
    await mkdir(folder, { recursive: true });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  async function put(file: string, content: object | string, touchedAgo: number): Promise<void> {
    await writeFile(file, typeof content === 'string' ? content : JSON.stringify(content));
    await touch(file, touchedAgo);
  }
  async function touch(file: string, touchedAgo: number): Promise<void> {
    const at = new Date(clock.now().getTime() - touchedAgo);
    await utimes(file, at, at);
  }
  function mustHold(result: LockResult): HeldLock {
    if (!('held' in result)) throw new Error(`expected the lock, got busy: ${JSON.stringify(result.busy)}`);
    return result.held;
  }

  describe('on the edge of each window', () => {
    it('leaves a lock from another host untouched for exactly the staleness window, and takes it a second later', async () => {
      await put(lockFile(), other, STALE_MS);
      expect(await locks().acquire('a', { waitMs: 0 })).toEqual(busyWith(other));
      await touch(lockFile(), STALE_MS + SECOND);
      mustHold(await locks().acquire('a', { waitMs: 0 }));
    });

    it("clears a crashed process's temporary file only once it is older than the staleness window", async () => {
      await put(join(folder, 'b.lock.0123456789ab.tmp'), other, STALE_MS);
      await put(join(folder, 'c.lock.1123456789ab.tmp'), other, STALE_MS + SECOND);
      mustHold(await locks().acquire('a', { waitMs: 0 }));
      expect((await readdir(folder)).sort()).toEqual(['a.lock', 'b.lock.0123456789ab.tmp']);
    });

    it('waits for a takeover guard from another host for ten seconds, then clears it and takes the abandoned lock at once', async () => {
      await put(lockFile(), other, HOUR);
      await put(guardFile(), { ...other, nonce: 'their-guard' }, GUARD_STALE_MS);
      expect(await locks().acquire('a', { waitMs: 0 })).toEqual(busyWith(other));
      expect(existsSync(guardFile())).toBe(true);

      await touch(guardFile(), GUARD_STALE_MS + SECOND);
      mustHold(await locks().acquire('a', { waitMs: 0 }));
      expect(await readdir(folder)).toEqual(['a.lock']);
    });
  });

  it('never takes over a folder where a lock file belongs, however old, nor fails on it', async () => {
    await mkdir(lockFile());
    await touch(lockFile(), HOUR);
    expect(await locks().acquire('a', { waitMs: 0 })).toEqual({ busy: undefined });
    expect(await readdir(folder)).toEqual(['a.lock']);
  });

  it('fails, rather than spinning or taking it for free, on a lock file it cannot read', async () => {
    await symlink('a.lock', lockFile()); // a loop: opening it fails with ELOOP
    await expect(locks().acquire('a', { waitMs: 0 })).rejects.toMatchObject({ code: 'ELOOP' });
  });

  it('skips debris that is gone by the time it is read', async () => {
    await symlink('nowhere', join(folder, 'b.lock.0123456789ab.tmp')); // listed, but opening it finds nothing
    mustHold(await locks().acquire('a', { waitMs: 0 }));
  });

  describe.runIf(existsSync('/proc/self/stat'))('a live process on this host', () => {
    // A process that runs on this host for the whole test: the one that started this one.
    const live = { pid: process.ppid, host: hostname(), acquiredAt: '2026-11-22T11:00:00.000Z', nonce: 'theirs' };

    it('keeps the lock of a name that looks like debris, however old its heartbeat', async () => {
      const name = 'x.0123456789ab.tmp'; // a valid token name
      await put(lockFile(name), live, HOUR);
      expect(await locks().acquire(name, { waitMs: 0 })).toEqual(busyWith(live));
      expect(JSON.parse(await readFile(lockFile(name), 'utf8'))).toEqual(live);
    });

    it('keeps a lock taken in the name of another pid: it is judged by that pid, not by this process', async () => {
      const held = mustHold(await locks({ pid: process.ppid }).acquire('a', { waitMs: 0 }));
      await touch(lockFile(), HOUR);
      expect(await locks().acquire('a', { waitMs: 0 })).toEqual({
        busy: { who: `pid ${process.ppid} on ${hostname()}`, since: clock.now().toISOString() },
      });
      await held.release();
    });
  });

  it('removes a lock only if, judged again under the takeover guard, its holder is still gone', async () => {
    // Gone at the first look, alive from the time the guard is held on: the first look was out of date.
    let seenAlive = false;
    const isAlive = (pid: number) => {
      seenAlive ||= existsSync(guardFile());
      return pid !== 4242 || seenAlive;
    };
    const holder = { ...other, host: hostname() };
    await put(lockFile(), holder, 0);
    expect(await locks({ isAlive }).acquire('a', { waitMs: 0 })).toEqual(busyWith(holder));
    expect(JSON.parse(await readFile(lockFile(), 'utf8'))).toEqual(holder);
  });

  it('takes the lock when, by the time the takeover guard is held, the abandoned lock is gone already', async () => {
    const isAlive = (pid: number) => {
      if (pid === 4242) rmSync(lockFile(), { force: true }); // another taker removed it right after our look
      return pid !== 4242;
    };
    await put(lockFile(), { ...other, host: hostname() }, 0);
    mustHold(await locks({ isAlive }).acquire('a', { waitMs: 0 }));
    expect(await readdir(folder)).toEqual(['a.lock']);
  });

  it('clears at once a takeover guard of its own left behind once that takeover is over', async () => {
    const holder = { ...other, host: hostname() }; // a dead process on this host
    let guard: string | undefined;
    const isAlive = (pid: number) => {
      if (existsSync(guardFile())) guard = readFileSync(guardFile(), 'utf8'); // ours, mid-takeover
      return pid !== 4242;
    };
    await put(lockFile(), holder, 0);
    await mustHold(await locks({ isAlive }).acquire('a', { waitMs: 0 })).release();
    expect(guard).toBeDefined();

    // The same again, but the first takeover's guard is still there: its removal failed.
    await put(lockFile(), holder, 0);
    await put(guardFile(), guard!, 0);
    mustHold(await locks({ isAlive }).acquire('a', { waitMs: 0 }));
    expect(await readdir(folder)).toEqual(['a.lock']);
  });

  it('judges a record of its own that it released as left behind, and takes it at once', async () => {
    const first = mustHold(await locks().acquire('a', { waitMs: 0 }));
    const ours = await readFile(lockFile(), 'utf8');
    await first.release();
    await put(lockFile(), ours, 0); // as if its removal had failed
    const second = mustHold(await locks().acquire('a', { waitMs: 0 }));
    expect(await readFile(lockFile(), 'utf8')).not.toBe(ours);
    await second.release();
  });

  describe('a held lock whose file changed under it', () => {
    it.each([
      ['no readable owner', 'null'],
      ['an object of another shape', '{"holder": "someone"}'],
    ])('holding %s: assertHeld throws LockLostError saying so, and release leaves the file', async (_case, text) => {
      const held = mustHold(await locks().acquire('a', { waitMs: 0 }));
      await writeFile(lockFile(), text);
      const lost = await held.assertHeld().catch((error: unknown) => error);
      expect(lost).toBeInstanceOf(LockLostError);
      expect((lost as Error).message).toMatch(/no readable owner/);
      await expect(held.release()).resolves.toBeUndefined();
      expect(await readFile(lockFile(), 'utf8')).toBe(text);
    });

    it('gone: release does nothing and does not fail', async () => {
      const held = mustHold(await locks().acquire('a', { waitMs: 0 }));
      await rm(lockFile());
      await expect(held.release()).resolves.toBeUndefined();
      expect(await readdir(folder)).toEqual([]);
    });
  });

  it('leaves no heartbeat running once a lock is released', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const held = mustHold(await locks({ heartbeatMs: SECOND }).acquire('a', { waitMs: 0 }));
    expect(vi.getTimerCount()).toBe(1);
    await held.release();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('keeps no process alive by the heartbeat of a lock it holds', async () => {
    const timers = vi.spyOn(globalThis, 'setInterval');
    const held = mustHold(await locks().acquire('a', { waitMs: 0 }));
    expect(timers).toHaveBeenCalledTimes(1);
    expect((timers.mock.results[0]!.value as NodeJS.Timeout).hasRef()).toBe(false);
    await held.release();
    timers.mockRestore();
  });

  it('makes the lock folder again when it was removed after the first lock', async () => {
    const instance = locks();
    await mustHold(await instance.acquire('a', { waitMs: 0 })).release();
    await rm(folder, { recursive: true });
    mustHold(await instance.acquire('a', { waitMs: 0 }));
    expect(await readdir(folder)).toEqual(['a.lock']);
  });

  it('tries to make the lock folder again after it could not', async () => {
    const root = join(dir, 'state');
    await writeFile(root, 'a file where the state folder belongs');
    const instance = fileNameLocks(root, { clock });
    await expect(instance.acquire('a', { waitMs: 0 })).rejects.toMatchObject({ code: expect.stringMatching(/^(ENOTDIR|EEXIST)$/) });
    await rm(root);
    await mkdir(root);
    mustHold(await instance.acquire('a', { waitMs: 0 }));
  });

  it("removes a crashed holder's half-written files once its lock is taken over, though the folder was listed just before", async () => {
    const journal = fileJournal(dir);
    await mkdir(join(dir, 'journal'), { recursive: true });
    await journal.removeLeftovers('a'); // lists the folder: nothing left over yet
    // Then a holder crashed while writing its entry: its temporary file and its lock are left.
    const leftover = join(dir, 'journal', '.a.json.0123456789ab.tmp');
    await writeFile(leftover, '{"secret": "canary-half-written"}');
    await put(lockFile(), other, HOUR);

    mustHold(await locks().acquire('a', { waitMs: 0 }));
    await journal.removeLeftovers('a');
    expect(existsSync(leftover)).toBe(false);
  });
});

import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { mkdir, readdir, readFile, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { beforeEach, describe, expect, it, vi } from 'vitest';

import { fixedClock } from '../../src/clock.js';
import { LockLostError } from '../../src/errors.js';
import { fileNameLocks } from '../../src/state/backends/file/file-locks.js';
import { createRecord, readRecord, removeIfUnchanged, touchIfOwned } from '../../src/state/backends/file/lock-record.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/**
 * Errors of the file system the lock records meet only in races or on unusual file systems: each
 * is injected once, on the next call of one function whose path matches.
 */
const faults = vi.hoisted(() => {
  const queue: { fn: string; match: RegExp; code: string; first?: () => void }[] = [];
  const pauses: { fn: string; match: RegExp; reached: () => void; resumed: Promise<void> }[] = [];
  return {
    queue,
    pauses,
    /** Waits, once, where a pause for `fn` and `path` was asked for, until the test resumes it. */
    async pause(fn: string, path: unknown): Promise<void> {
      const index = pauses.findIndex((p) => p.fn === fn && typeof path === 'string' && p.match.test(path));
      if (index < 0) return;
      const [pause] = pauses.splice(index, 1);
      pause!.reached();
      await pause!.resumed;
    },
    /** Throws the first queued fault for `fn` whose pattern matches `path`, removing it from the queue. */
    check(fn: string, path: unknown): void {
      const index = queue.findIndex((f) => f.fn === fn && typeof path === 'string' && f.match.test(path));
      if (index < 0) return;
      const [fault] = queue.splice(index, 1);
      fault!.first?.();
      throw Object.assign(new Error(`${fault!.code}: injected, ${fn} '${String(path)}'`), { code: fault!.code, syscall: fn, path });
    },
  };
});

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  const wrapped = {
    ...real,
    link: async (from: string, to: string) => (faults.check('link', `${from} -> ${to}`), real.link(from, to)),
    rename: async (from: string, to: string) => {
      await faults.pause('rename', from);
      faults.check('rename', from);
      return real.rename(from, to);
    },
    unlink: async (path: string) => (faults.check('unlink', path), real.unlink(path)),
    readdir: (async (path: string, ...rest: unknown[]) => (
      faults.check('readdir', path),
      (real.readdir as (...a: unknown[]) => unknown)(path, ...rest)
    )) as typeof real.readdir,
  };
  return { ...wrapped, default: wrapped };
});

vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  const readFileSync = ((path: unknown, ...rest: unknown[]) => (
    faults.check('readFileSync', typeof path === 'number' ? `fd:${path}` : path),
    (real.readFileSync as (...a: unknown[]) => unknown)(path, ...rest)
  )) as typeof real.readFileSync;
  return { ...real, readFileSync, default: { ...real, readFileSync } };
});

/** The inode a descriptor of /proc/self/fd has open, if it is still open. */
function inodeOrNone(path: string): number | undefined {
  try {
    return statSync(path).ino;
  } catch {
    return undefined;
  }
}

/** The next call of `fn` on a path matching `match` waits until `resume` is called; `reached` settles when it does. */
function pauseAt(fn: string, match: RegExp): { reached: Promise<void>; resume: () => void } {
  let reached!: () => void;
  let resume!: () => void;
  const pause = {
    reached: new Promise<void>((r) => (reached = r)),
    resumed: new Promise<void>((r) => (resume = r)),
  };
  faults.pauses.push({ fn, match, reached, resumed: pause.resumed });
  return { reached: pause.reached, resume };
}

/** The next call of `fn` on a path matching `match` fails with `code`, after doing `first`. */
const inject = (fn: string, match: RegExp, code: string, first?: () => void) => faults.queue.push({ fn, match, code, first });

describe('lock records when the file system fails', () => {
  let dir: string;
  let file: string;
  const owner = (nonce: string) => ({ pid: 4242, host: 'other-host', acquiredAt: '2026-11-22T11:00:00.000Z', nonce });

  beforeEach(async () => {
    faults.queue.length = 0;
    faults.pauses.length = 0;
    dir = await makeTempDir();
    file = join(dir, 'a.lock');
  });

  describe('creating a record', () => {
    it('fails with the error where hard links cannot be made, and leaves no temporary file', async () => {
      inject('link', /\.tmp -> /, 'EPERM');
      await expect(createRecord(file, owner('mine'))).rejects.toMatchObject({ code: 'EPERM' });
      expect(await readdir(dir)).toEqual([]);
    });

    it('reports no record made when its temporary file was cleared as debris meanwhile, so that the caller tries again', async () => {
      inject('link', /\.tmp -> /, 'ENOENT');
      expect(await createRecord(file, owner('mine'))).toBeUndefined();
      expect(await readdir(dir)).toEqual([]);
      expect(await createRecord(file, owner('mine'))).toBeDefined();
    });

    it('lets an acquire whose temporary file was cleared meanwhile try again and take the lock', async () => {
      inject('link', /\.tmp -> /, 'ENOENT');
      const result = await fileNameLocks(dir, { clock: fixedClock('2026-11-22T12:00:00.000Z') }).acquire('a', { waitMs: 0 });
      expect('held' in result).toBe(true);
    });
  });

  describe('removing a record if unchanged', () => {
    it('does nothing when there is no record', async () => {
      await expect(removeIfUnchanged(file, JSON.stringify(owner('x')))).resolves.toBeUndefined();
      expect(await readdir(dir)).toEqual([]);
    });

    it('fails with the error when the record cannot be set aside, and leaves it', async () => {
      const raw = (await createRecord(file, owner('judged')))!;
      inject('rename', /a\.lock$/, 'EBUSY');
      await expect(removeIfUnchanged(file, raw)).rejects.toMatchObject({ code: 'EBUSY' });
      expect(await readFile(file, 'utf8')).toBe(raw);
    });

    it('takes a record set aside and then cleared as debris for the one judged: it is not put back', async () => {
      const raw = (await createRecord(file, owner('judged')))!;
      inject('readFileSync', /\.removing$/, 'ENOENT');
      await removeIfUnchanged(file, raw);
      expect(await readdir(dir)).toEqual([]);
    });

    it('fails with the error when the record set aside cannot be read, and removes nothing it did not look at', async () => {
      const raw = (await createRecord(file, owner('judged')))!;
      inject('readFileSync', /\.removing$/, 'EIO');
      await expect(removeIfUnchanged(file, raw)).rejects.toMatchObject({ code: 'EIO' });
    });

    it('gives up quietly when yet another record took the place of one it puts back', async () => {
      await createRecord(file, owner('newer'));
      inject('link', /\.removing -> /, 'EEXIST');
      await expect(removeIfUnchanged(file, JSON.stringify(owner('judged')))).resolves.toBeUndefined();
    });

    it('fails with the error when a record that changed cannot be put back', async () => {
      await createRecord(file, owner('newer'));
      inject('link', /\.removing -> /, 'EPERM');
      await expect(removeIfUnchanged(file, JSON.stringify(owner('judged')))).rejects.toMatchObject({ code: 'EPERM' });
    });
  });

  describe('reading and touching a record', () => {
    it('fails with the error when the record cannot be read, rather than taking it for a folder', async () => {
      await createRecord(file, owner('x'));
      inject('readFileSync', /^fd:/, 'EIO');
      await expect(readRecord(file)).rejects.toMatchObject({ code: 'EIO' });
    });

    it('touches nothing, and says so, when the record is gone or holds no owner', async () => {
      expect(await touchIfOwned(file, 'mine', new Date())).toBe(false);
      await writeFile(file, 'null');
      expect(await touchIfOwned(file, 'mine', new Date())).toBe(false);
      expect(await readFile(file, 'utf8')).toBe('null');
    });

    it('fails with the error when the record cannot be opened', async () => {
      await symlink('a.lock', file); // a loop: ELOOP
      await expect(touchIfOwned(file, 'mine', new Date())).rejects.toMatchObject({ code: 'ELOOP' });
    });
  });

  describe('name locks', () => {
    const clock = fixedClock('2026-11-22T12:00:00.000Z');

    it('after a release that failed, no longer takes the lock for held, and gives it up when released again', async () => {
      const result = await fileNameLocks(dir, { clock }).acquire('a', { waitMs: 0 });
      if (!('held' in result)) throw new Error('the lock is busy');
      inject('rename', /a\.lock$/, 'EBUSY');
      await expect(result.held.release()).rejects.toMatchObject({ code: 'EBUSY' });
      expect(existsSync(join(dir, 'locks/a.lock'))).toBe(true);
      await expect(result.held.assertHeld()).rejects.toBeInstanceOf(LockLostError);

      // Tried again, it gives the lock up: other processes need not wait for it to go stale.
      await result.held.release();
      expect(await readdir(join(dir, 'locks'))).toEqual([]);
      await result.held.release(); // and once more: nothing left to do
    });

    it.runIf(existsSync('/proc/self/fd'))('after a release that failed, keeps its record open for the next release', async () => {
      const result = await fileNameLocks(dir, { clock }).acquire('a', { waitMs: 0 });
      if (!('held' in result)) throw new Error('the lock is busy');
      const { ino } = statSync(join(dir, 'locks/a.lock'));
      /** Whether this process has the lock record's inode open. */
      const keptOpen = () => readdirSync('/proc/self/fd').some((fd) => inodeOrNone(`/proc/self/fd/${fd}`) === ino);
      expect(keptOpen()).toBe(true);
      inject('rename', /a\.lock$/, 'EBUSY');
      await expect(result.held.release()).rejects.toMatchObject({ code: 'EBUSY' });
      // Still ours and still there: the descriptor keeps its inode from being reused by another
      // record, which a second release would take for ours.
      expect(keptOpen()).toBe(true);
      await result.held.release();
      expect(keptOpen()).toBe(false);
      await result.held.release();
    });

    it('takes an abandoned lock at once when the takeover guard in its way is gone by the time it is looked at', async () => {
      await mkdir(join(dir, 'locks'), { recursive: true });
      const lock = join(dir, 'locks/a.lock');
      const guard = `${lock}.takeover`;
      const old = new Date('2026-11-22T10:00:00.000Z');
      await writeFile(lock, JSON.stringify(owner('dead')));
      await utimes(lock, old, old);
      await writeFile(guard, JSON.stringify(owner('their-guard')));
      await utimes(guard, clock.now(), clock.now()); // fresh: in the way
      // Our guard cannot be linked, as theirs is there; right then, its taker removes it.
      inject('link', /\.takeover$/, 'EEXIST', () => rmSync(guard));
      const result = await fileNameLocks(dir, { clock }).acquire('a', { waitMs: 0 });
      expect('held' in result).toBe(true);
      expect(await readdir(join(dir, 'locks'))).toEqual(['a.lock']);
    });

    it('keeps another lock instance of this process from clearing the guard of a takeover in progress', async () => {
      await mkdir(join(dir, 'locks'), { recursive: true });
      const lock = join(dir, 'locks/a.lock');
      const old = new Date('2026-11-22T10:00:00.000Z');
      await writeFile(lock, JSON.stringify(owner('dead')));
      await utimes(lock, old, old);
      // The first instance stops right before it removes the abandoned lock, its guard in place.
      const paused = pauseAt('rename', /a\.lock$/);
      const first = fileNameLocks(dir, { clock }).acquire('a', { waitMs: 0 });
      await paused.reached;
      expect(existsSync(`${lock}.takeover`)).toBe(true);

      expect(await fileNameLocks(dir, { clock }).acquire('a', { waitMs: 0 })).toEqual({
        busy: { who: 'pid 4242 on other-host', since: '2026-11-22T11:00:00.000Z' },
      });
      paused.resume();
      expect('held' in (await first)).toBe(true);
    });

    describe('a temporary record of its own it could not remove', () => {
      const temporary = /a\.lock\.[0-9a-f]{12}\.tmp$/;
      const leftovers = async () => (await readdir(join(dir, 'locks'))).filter((name) => temporary.test(name));

      it('after a lock found busy, is cleared at once by the next lock instance of this process', async () => {
        await mkdir(join(dir, 'locks'), { recursive: true });
        await writeFile(join(dir, 'locks/a.lock'), JSON.stringify(owner('theirs')));
        await utimes(join(dir, 'locks/a.lock'), clock.now(), clock.now());
        inject('unlink', temporary, 'EIO');
        expect('busy' in (await fileNameLocks(dir, { clock }).acquire('a', { waitMs: 0 }))).toBe(true);
        expect(await leftovers()).toHaveLength(1);

        expect('held' in (await fileNameLocks(dir, { clock }).acquire('b', { waitMs: 0 }))).toBe(true);
        expect(await leftovers()).toEqual([]);
      });

      it('after a lock that could not be made, is cleared at once by the next lock instance of this process', async () => {
        inject('link', /\.tmp -> .*a\.lock$/, 'EPERM');
        inject('unlink', temporary, 'EIO');
        await expect(fileNameLocks(dir, { clock }).acquire('a', { waitMs: 0 })).rejects.toMatchObject({ code: 'EPERM' });
        expect(await leftovers()).toHaveLength(1);

        expect('held' in (await fileNameLocks(dir, { clock }).acquire('b', { waitMs: 0 }))).toBe(true);
        expect(await leftovers()).toEqual([]);
      });
    });

    it("lists the folder for a crashed process's debris again after a listing failed", async () => {
      await mkdir(join(dir, 'locks'), { recursive: true });
      const debris = join(dir, 'locks/b.lock.0123456789ab.tmp');
      await writeFile(debris, JSON.stringify(owner('dead')));
      await utimes(debris, new Date('2026-11-22T10:00:00.000Z'), new Date('2026-11-22T10:00:00.000Z'));
      const locks = fileNameLocks(dir, { clock });

      inject('readdir', /locks$/, 'EIO');
      await expect(locks.acquire('a', { waitMs: 0 })).rejects.toMatchObject({ code: 'EIO' });
      const result = await locks.acquire('a', { waitMs: 0 });
      expect('held' in result).toBe(true);
      expect(existsSync(debris)).toBe(false);
    });
  });
});

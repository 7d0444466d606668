import { existsSync } from 'node:fs';
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
  const queue: { fn: string; match: RegExp; code: string }[] = [];
  return {
    queue,
    /** Throws the first queued fault for `fn` whose pattern matches `path`, removing it from the queue. */
    check(fn: string, path: unknown): void {
      const index = queue.findIndex((f) => f.fn === fn && typeof path === 'string' && f.match.test(path));
      if (index < 0) return;
      const [fault] = queue.splice(index, 1);
      throw Object.assign(new Error(`${fault!.code}: injected, ${fn} '${String(path)}'`), { code: fault!.code, syscall: fn, path });
    },
  };
});

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  const wrapped = {
    ...real,
    link: async (from: string, to: string) => (faults.check('link', `${from} -> ${to}`), real.link(from, to)),
    rename: async (from: string, to: string) => (faults.check('rename', from), real.rename(from, to)),
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

const inject = (fn: string, match: RegExp, code: string) => faults.queue.push({ fn, match, code });

describe('lock records when the file system fails', () => {
  let dir: string;
  let file: string;
  const owner = (nonce: string) => ({ pid: 4242, host: 'other-host', acquiredAt: '2026-11-22T11:00:00.000Z', nonce });

  beforeEach(async () => {
    faults.queue.length = 0;
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

    it('after a release that failed, no longer takes the lock for held', async () => {
      const result = await fileNameLocks(dir, { clock }).acquire('a', { waitMs: 0 });
      if (!('held' in result)) throw new Error('the lock is busy');
      inject('rename', /a\.lock$/, 'EBUSY');
      await expect(result.held.release()).rejects.toMatchObject({ code: 'EBUSY' });
      expect(existsSync(join(dir, 'locks/a.lock'))).toBe(true);
      await expect(result.held.assertHeld()).rejects.toBeInstanceOf(LockLostError);
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

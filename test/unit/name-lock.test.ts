import { mkdir, readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { systemClock } from '../../src/clock.js';
import { fileNameLocks } from '../../src/state/backends/file/file-locks.js';
import { makeTempDir } from '../helpers/temp-dir.js';

describe('name locks', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await makeTempDir();
  });

  const locks = (pid: number, host = 'h1', alive: number[] = []) =>
    fileNameLocks(dir, { clock: systemClock, pid, host, isAlive: (p) => alive.includes(p) || p === pid, staleMs: 60_000, pollMs: 10 });

  it('gives a name to one holder at a time, and records who holds it', async () => {
    const first = await locks(100).acquire('a', { waitMs: 0 });
    expect('held' in first).toBe(true);
    expect(JSON.parse(await readFile(join(dir, 'locks/a.lock'), 'utf8'))).toMatchObject({ pid: 100, host: 'h1' });
    const second = await locks(200, 'h1', [100]).acquire('a', { waitMs: 30 });
    expect(second).toEqual({ busy: expect.objectContaining({ who: 'pid 100 on h1' }) });
    expect('held' in (await locks(200).acquire('b', { waitMs: 0 }))).toBe(true);
  });

  it('hands the name over once the holder releases it, to a waiting process', async () => {
    const first = await locks(100).acquire('a', { waitMs: 0 });
    const waiting = locks(200, 'h1', [100]).acquire('a', { waitMs: 2000 });
    setTimeout(() => void ('held' in first && first.held.release()), 50);
    expect('held' in (await waiting)).toBe(true);
  });

  it('takes over the lock of a process on this host that is gone', async () => {
    await locks(100).acquire('a', { waitMs: 0 }); // pid 100 then dies: not in the alive list below
    const result = await locks(200).acquire('a', { waitMs: 0 });
    expect('held' in result).toBe(true);
    expect(JSON.parse(await readFile(join(dir, 'locks/a.lock'), 'utf8'))).toMatchObject({ pid: 200 });
  });

  it('waits for a lock held on another host until it goes stale', async () => {
    await locks(100, 'other-host').acquire('a', { waitMs: 0 });
    expect('busy' in (await locks(200).acquire('a', { waitMs: 0 }))).toBe(true);
    const old = new Date(Date.now() - 120_000);
    await utimes(join(dir, 'locks/a.lock'), old, old);
    expect('held' in (await locks(200).acquire('a', { waitMs: 0 }))).toBe(true);
  });

  it('lets exactly one of many processes take over an abandoned lock', async () => {
    await mkdir(join(dir, 'locks'), { recursive: true });
    await writeFile(join(dir, 'locks/a.lock'), JSON.stringify({ pid: 999_999, host: 'h1', acquiredAt: '2026-01-01T00:00:00Z' }));
    const contenders = [201, 202, 203, 204, 205, 206];
    const results = await Promise.all(contenders.map((pid) => locks(pid, 'h1', contenders).acquire('a', { waitMs: 0 })));
    expect(results.filter((r) => 'held' in r)).toHaveLength(1);
  });

  it('never shows a lock without its owner, and leaves no temporary files behind', async () => {
    await locks(100).acquire('a', { waitMs: 0 });
    expect(JSON.parse(await readFile(join(dir, 'locks/a.lock'), 'utf8'))).toMatchObject({ pid: 100 });
    expect(await readdir(join(dir, 'locks'))).toEqual(['a.lock']);
  });

  it('does not remove a lock that another process took over meanwhile', async () => {
    const first = await locks(100).acquire('a', { waitMs: 0 });
    const old = new Date(Date.now() - 120_000);
    await utimes(join(dir, 'locks/a.lock'), old, old);
    const second = await locks(200, 'other').acquire('a', { waitMs: 0 });
    expect('held' in second).toBe(true);
    if ('held' in first) await first.held.release();
    expect(JSON.parse(await readFile(join(dir, 'locks/a.lock'), 'utf8'))).toMatchObject({ pid: 200 });
  });
});

import { randomBytes } from 'node:crypto';
import { readFile, rename, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { systemClock } from '../../src/clock.js';
import { LockLostError } from '../../src/errors.js';
import { fileNameLocks } from '../../src/state/backends/file/file-locks.js';
import type { HeldLock } from '../../src/state/name-locks.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const HOUR = 3600_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a held lock knows whether it is still held', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await makeTempDir();
  });

  const lockFile = (name: string) => join(dir, `locks/${name}.lock`);
  const mtime = async (file: string) => (await stat(file)).mtimeMs;
  const backdate = (file: string, ms: number) => utimes(file, new Date(Date.now() - ms), new Date(Date.now() - ms));

  async function acquire(name: string, options: { heartbeatMs?: number; staleMs?: number } = {}): Promise<HeldLock> {
    const result = await fileNameLocks(dir, { clock: systemClock, ...options }).acquire(name, { waitMs: 0 });
    if (!('held' in result)) throw new Error(`${name} is busy`);
    return result.held;
  }

  /** What another process does when it takes the lock over: a whole new file, put in place at once. */
  async function replaceLock(name: string, owner: object): Promise<void> {
    const temporary = `${lockFile(name)}.${randomBytes(6).toString('hex')}.test`;
    await writeFile(temporary, JSON.stringify({ acquiredAt: '2026-01-02T03:04:05.000Z', nonce: 'theirs', ...owner }));
    await rename(temporary, lockFile(name));
  }

  async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
    for (const started = Date.now(); !(await check()); await sleep(20)) {
      if (Date.now() - started > 20_000) throw new Error(`timed out waiting until ${what}`);
    }
  }

  it('assertHeld succeeds while the lock is ours, and throws LockLostError naming the new owner once it was taken over', async () => {
    const held = await acquire('a');
    await expect(held.assertHeld()).resolves.toBeUndefined();

    await replaceLock('a', { pid: 4242, host: 'other-host' });
    const lost = await held.assertHeld().catch((error: unknown) => error);
    expect(lost).toBeInstanceOf(LockLostError);
    expect(lost).toMatchObject({ code: 'ERR_LOCK_LOST' });
    const message = (lost as Error).message;
    for (const part of ['"a"', 'pid 4242', 'other-host', '2026-01-02T03:04:05.000Z', 'without side effects'])
      expect(message).toContain(part);
  });

  it('assertHeld throws LockLostError when the lock file is gone', async () => {
    const held = await acquire('a');
    await unlink(lockFile('a'));
    await expect(held.assertHeld()).rejects.toThrow(/lock on "a".*gone.*without side effects/);
  });

  it('release leaves a lock alone that has our pid, host and time but another nonce', async () => {
    const held = await acquire('a');
    const ours = JSON.parse(await readFile(lockFile('a'), 'utf8')) as Record<string, unknown>;
    await replaceLock('a', { ...ours, nonce: 'a-later-owner' });
    await held.release();
    expect(JSON.parse(await readFile(lockFile('a'), 'utf8'))).toMatchObject({ nonce: 'a-later-owner' });
  });

  it('the heartbeat keeps our lock fresh, and never touches a lock that is no longer ours', async () => {
    const lost = await acquire('lost', { staleMs: 4000, heartbeatMs: 20 });
    const kept = await acquire('kept', { staleMs: 4000, heartbeatMs: 20 });
    await replaceLock('lost', { pid: 4242, host: 'other-host' });
    await backdate(lockFile('lost'), HOUR);
    const theirs = await mtime(lockFile('lost'));

    // Several rounds of the heartbeat, each seen on the lock still held (their timers run together).
    for (let round = 0; round < 3; round++) {
      await backdate(lockFile('kept'), HOUR);
      const before = await mtime(lockFile('kept'));
      await eventually(async () => (await mtime(lockFile('kept'))) > before, 'the heartbeat touches the lock still held');
    }
    expect(await mtime(lockFile('lost'))).toBe(theirs);
    await Promise.all([lost.release(), kept.release()]);
  });
});

import { copyFile, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { systemClock } from '../../src/clock.js';
import { LockLostError } from '../../src/errors.js';
import { fileNameLocks } from '../../src/state/backends/file/file-locks.js';
import { createKeptRecord, isKept } from '../../src/state/backends/file/lock-record.js';
import type { HeldLock } from '../../src/state/name-locks.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/**
 * A held lock is the very file its holder created (kept open, so its inode cannot be reused), not
 * any file whose text names the holder: a lock taken over and put back as a copy of ours, byte for
 * byte, is another holder's act, and the step about to run must not run on it.
 */
describe('a held lock is the file it created', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await makeTempDir();
  });
  const lockFile = (name: string) => join(dir, `locks/${name}.lock`);

  async function acquire(name: string): Promise<HeldLock> {
    const result = await fileNameLocks(dir, { clock: systemClock }).acquire(name, { waitMs: 0 });
    if (!('held' in result)) throw new Error(`${name} is busy`);
    return result.held;
  }

  it('a lock replaced by a copy of itself (same owner, same nonce, another file) fails assertHeld', async () => {
    const held = await acquire('a');
    const copy = `${lockFile('a')}.copy`;
    await copyFile(lockFile('a'), copy);
    const ours = await readFile(lockFile('a'), 'utf8');
    await rename(copy, lockFile('a'));
    expect(await readFile(lockFile('a'), 'utf8')).toBe(ours);
    const lost = await held.assertHeld().catch((error: unknown) => error);
    expect(lost).toBeInstanceOf(LockLostError);
    expect((lost as Error).message).toMatch(/lost the lock on "a": pid \d+ on .* has held it since/);
    // Not ours: release leaves it where it is.
    await held.release();
    expect(await readFile(lockFile('a'), 'utf8')).toBe(ours);
  });

  it('assertHeld holds until release, then fails; a second release does nothing', async () => {
    const held = await acquire('a');
    await expect(held.assertHeld()).resolves.toBeUndefined();
    await held.release();
    await expect(held.assertHeld()).rejects.toMatchObject({ code: 'ERR_LOCK_LOST' });
    await expect(held.release()).resolves.toBeUndefined();
  });

  it('isKept: the same file, kept open; not a file of another size, nor none', async () => {
    const file = join(dir, 'x.lock');
    const kept = (await createKeptRecord(file, { pid: 1, host: 'h', acquiredAt: 'now' }))!;
    expect(kept.raw).toBe(await readFile(file, 'utf8'));
    expect(isKept(file, kept)).toBe(true);
    expect(isKept(file, { ...kept, size: kept.size + 1 })).toBe(false);
    expect(isKept(file, { ...kept, ino: kept.ino + 1 })).toBe(false);
    expect(isKept(file, { ...kept, dev: kept.dev + 1 })).toBe(false);
    expect(isKept(join(dir, 'none.lock'), kept)).toBe(false);
    expect(() => isKept(join(file, 'below-a-file'), kept)).toThrow(expect.objectContaining({ code: 'ENOTDIR' }));
    expect(await createKeptRecord(file, { pid: 2, host: 'h', acquiredAt: 'now' })).toBeUndefined();
  });
});

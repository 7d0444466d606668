import { existsSync } from 'node:fs';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { fixedClock } from '../../src/clock.js';
import { fileNameLocks } from '../../src/state/backends/file/file-locks.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const MINUTE = 60_000;
/** The default staleness window (two minutes), with a wide margin either side. */
const FRESH = MINUTE / 2;
const OLD = 30 * MINUTE;

/**
 * A lock file is written only by token-rotator, but a hand, a disk or another program can leave
 * anything in it. Text that is valid JSON but no owner record is judged as an unreadable record is
 * (see name-lock-debris.test.ts): by its age, never by an exception that would stop every run.
 */
describe('a lock file of valid JSON in the wrong shape', () => {
  let dir: string;
  const clock = fixedClock('2026-11-22T12:00:00.000Z');
  const lockFile = () => join(dir, 'locks/a.lock');
  const locks = () => fileNameLocks(dir, { clock });

  beforeEach(async () => {
    dir = await makeTempDir();
    await mkdir(join(dir, 'locks'), { recursive: true });
  });

  async function putLock(text: string, touchedAgo: number): Promise<void> {
    await writeFile(lockFile(), text);
    const at = new Date(clock.now().getTime() - touchedAgo);
    await utimes(lockFile(), at, at);
  }

  const someone = { host: 'other-host', acquiredAt: '2026-11-22T11:00:00.000Z', nonce: 'theirs' };
  const shapes = {
    null: 'null',
    'an array': '[{"pid": 4242, "host": "other-host", "acquiredAt": "2026-11-22T11:00:00.000Z"}]',
    'a number': '4242',
    'a string': '"pid 4242"',
    'a boolean': 'true',
    'an empty object': '{}',
    'a pid of 0 (a process group)': JSON.stringify({ ...someone, pid: 0 }),
    'a negative pid': JSON.stringify({ ...someone, pid: -4242 }),
    'a fractional pid': JSON.stringify({ ...someone, pid: 42.5 }),
    'a pid as text': JSON.stringify({ ...someone, pid: '4242' }),
    'no host': JSON.stringify({ pid: 4242, acquiredAt: someone.acquiredAt }),
    'a host that is no text': JSON.stringify({ ...someone, pid: 4242, host: 7 }),
    'no time': JSON.stringify({ pid: 4242, host: someone.host }),
    'a time that is no text': JSON.stringify({ ...someone, pid: 4242, acquiredAt: 1_700_000_000_000 }),
  };

  it.each(Object.entries(shapes))('holding %s: a fresh one is in the way, with no holder to name', async (_shape, text) => {
    await putLock(text, FRESH);
    expect(await locks().acquire('a', { waitMs: 0 })).toEqual({ busy: undefined });
  });

  it.each(Object.entries(shapes))('holding %s: an old one is taken over', async (_shape, text) => {
    await putLock(text, OLD);
    const result = await locks().acquire('a', { waitMs: 0 });
    expect('held' in result).toBe(true);
    if ('held' in result) {
      await expect(result.held.assertHeld()).resolves.toBeUndefined();
      await result.held.release();
    }
  });

  it('holding an owner record, it names the holder', async () => {
    await putLock(JSON.stringify({ ...someone, pid: 4242 }), FRESH);
    expect(await locks().acquire('a', { waitMs: 0 })).toEqual({ busy: { who: 'pid 4242 on other-host', since: someone.acquiredAt } });
  });

  describe.runIf(existsSync('/proc/self/stat'))('with a process identity that is damaged', () => {
    // A process that runs on this host for the whole test: the one that started this one.
    const live = { pid: process.ppid, host: hostname(), acquiredAt: '2026-11-22T11:00:00.000Z', nonce: 'theirs' };

    it.each([
      ['absent (null)', null],
      ['no object', 'pid:[4026531836]'],
      ['a start time that is no text', { startTime: 1234 }],
      ['a boot id that is no text', { bootId: 1234 }],
      ['a pid namespace that is no text', { pidNamespace: 1234 }],
    ])('%s: a live owner on this host keeps its lock, judged by its pid alone, however old its heartbeat', async (_case, identity) => {
      await putLock(JSON.stringify({ ...live, process: identity }), OLD);
      expect(await locks().acquire('a', { waitMs: 0 })).toEqual({
        busy: { who: `pid ${live.pid} on ${hostname()}`, since: live.acquiredAt },
      });
    });
  });
});

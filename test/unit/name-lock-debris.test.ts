import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { systemClock } from '../../src/clock.js';
import { fileNameLocks } from '../../src/state/backends/file/file-locks.js';
import { makeTempDir } from '../helpers/temp-dir.js';

function identityOf(pid: number): { startTime: string; bootId: string } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { startTime: fields[19]!, bootId: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() };
}

async function startSleeper(): Promise<{ child: ChildProcess; owner: object }> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 60_000)'], { stdio: 'ignore' });
  await once(child, 'spawn');
  const owner = {
    pid: child.pid,
    host: hostname(),
    acquiredAt: new Date().toISOString(),
    nonce: randomNonce(),
    process: identityOf(child.pid!),
  };
  return { child, owner };
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

/** The owner record of a real process on this host that was then SIGKILLed, as a killed run leaves it. */
async function killedOwner(): Promise<object> {
  const { child, owner } = await startSleeper();
  await kill(child);
  return owner;
}

const randomNonce = () => Math.random().toString(16).slice(2).padEnd(32, '0');
const backdate = (file: string, ms: number) => utimes(file, new Date(Date.now() - ms), new Date(Date.now() - ms));

describe.runIf(existsSync('/proc/self/stat'))('what a killed process leaves behind never blocks the next run', () => {
  let dir: string;
  let folder: string;
  const children: ChildProcess[] = [];
  beforeEach(async () => {
    dir = await makeTempDir();
    folder = join(dir, 'locks');
    await mkdir(folder, { recursive: true });
  });
  afterEach(async () => {
    await Promise.all(children.splice(0).map(kill));
  });

  const locks = () => fileNameLocks(dir, { clock: systemClock, pollMs: 20 });

  it('takes over a dead lock promptly when a process killed during its takeover left the guard behind', async () => {
    await writeFile(join(folder, 'a.lock'), JSON.stringify(await killedOwner()));
    await writeFile(join(folder, 'a.lock.takeover'), JSON.stringify(await killedOwner()));

    // Well within the guard's ten seconds: its owner is gone, so it is cleared at once.
    const result = await locks().acquire('a', { waitMs: 2000 });
    expect('held' in result).toBe(true);
    expect(JSON.parse(await readFile(join(folder, 'a.lock'), 'utf8'))).toMatchObject({ pid: process.pid });
    expect(await readdir(folder)).toEqual(['a.lock']);
  });

  it('clears a guard from another host, or an unreadable one, only once it is a little old', async () => {
    await writeFile(join(folder, 'a.lock'), JSON.stringify(await killedOwner()));
    for (const guard of [JSON.stringify({ pid: 4242, host: 'other-host', acquiredAt: '2026-01-01T00:00:00Z', nonce: 'x' }), '{"pid": 42']) {
      await writeFile(join(folder, 'a.lock.takeover'), guard);
      expect(await locks().acquire('a', { waitMs: 100 })).toEqual({
        busy: expect.objectContaining({ who: expect.stringContaining(` on ${hostname()}`) }),
      });
      await backdate(join(folder, 'a.lock.takeover'), 60_000);
      const result = await locks().acquire('a', { waitMs: 2000 });
      expect('held' in result).toBe(true);
      if ('held' in result) await result.held.release();
      await writeFile(join(folder, 'a.lock'), JSON.stringify(await killedOwner()));
    }
  });

  it('waits for a guard in the way of a takeover only as long as it was asked to, as for a held lock', async () => {
    await writeFile(join(folder, 'a.lock'), JSON.stringify(await killedOwner()));
    const { child, owner } = await startSleeper();
    children.push(child);
    await writeFile(join(folder, 'a.lock.takeover'), JSON.stringify(owner)); // a live process, taking the lock over
    expect(await locks().acquire('a', { waitMs: 300 })).toEqual({
      busy: expect.objectContaining({ who: expect.stringContaining(` on ${hostname()}`) }),
    });

    await rm(join(folder, 'a.lock.takeover'));
    await mkdir(join(folder, 'a.lock.takeover')); // an earlier version's guard, fresh
    expect(await locks().acquire('a', { waitMs: 300 })).toEqual({
      busy: expect.objectContaining({ who: expect.stringContaining(` on ${hostname()}`) }),
    });
  });

  it('clears an old guard folder left by an earlier version', async () => {
    await writeFile(join(folder, 'a.lock'), JSON.stringify(await killedOwner()));
    await mkdir(join(folder, 'a.lock.takeover'));
    await backdate(join(folder, 'a.lock.takeover'), 60_000);
    expect('held' in (await locks().acquire('a', { waitMs: 2000 }))).toBe(true);
    expect(await readdir(folder)).toEqual(['a.lock']);
  });

  it('removes the temporary files of killed processes, and leaves a live one alone', async () => {
    const dead = await killedOwner();
    await writeFile(join(folder, 'a.lock.0123456789ab.tmp'), JSON.stringify(dead)); // killed before linking its lock
    await writeFile(join(folder, 'b.lock.takeover.0123456789ab.tmp'), JSON.stringify(dead)); // killed before linking its guard
    await writeFile(join(folder, 'a.lock.1123456789ab.tmp'), ''); // killed before writing: judged by its age
    await backdate(join(folder, 'a.lock.1123456789ab.tmp'), 10 * 60_000);
    await writeFile(join(folder, 'c.lock.2123456789ab.tmp'), ''); // perhaps still being written
    await writeFile(join(folder, 'c.lock.3123456789ab.removing'), JSON.stringify(dead)); // killed while removing a dead lock

    const result = await locks().acquire('a', { waitMs: 0 });
    expect('held' in result).toBe(true);
    expect((await readdir(folder)).sort()).toEqual(['a.lock', 'c.lock.2123456789ab.tmp']);
  });
});

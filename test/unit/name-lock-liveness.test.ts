import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { systemClock } from '../../src/clock.js';
import { fileNameLocks } from '../../src/state/backends/file/file-locks.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const LOCK_HOLDER = resolve(import.meta.dirname, '../fixtures/lock-holder.ts');
const HOUR = 3600_000;

/** Read here, not through the code under test, so that the tests check it against the kernel. */
function identityOf(pid: number): { startTime: string; bootId: string } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { startTime: fields[19]!, bootId: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() };
}

describe.runIf(existsSync('/proc/self/stat'))('name locks judge a same-host owner by its process, not its heartbeat', () => {
  let dir: string;
  const children: ChildProcess[] = [];
  beforeEach(async () => {
    dir = await makeTempDir();
    await mkdir(join(dir, 'locks'), { recursive: true });
  });
  afterEach(async () => {
    await Promise.all(children.splice(0).map(kill));
  });

  // The real defaults: the owner is judged by /proc and kill(2), with a two-minute staleness window.
  const locks = () => fileNameLocks(dir, { clock: systemClock, pollMs: 20 });
  const lockFile = () => join(dir, 'locks/a.lock');
  const backdate = (file: string, ms: number) => utimes(file, new Date(Date.now() - ms), new Date(Date.now() - ms));

  async function kill(child: ChildProcess): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  }

  async function startSleeper(): Promise<ChildProcess> {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 60_000)'], { stdio: 'ignore' });
    children.push(child);
    await once(child, 'spawn');
    return child;
  }

  /** A real process that tries for the lock on `name` once, and keeps it (with its heartbeat) if it got it. */
  async function startContender(name: string): Promise<{ child: ChildProcess; result: { held: true } | { busy: unknown } }> {
    const child = spawn(process.execPath, [LOCK_HOLDER, dir, name], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
    const line = await new Promise<string>((resolve, reject) => {
      child.stdout!.on('data', (chunk) => {
        stdout += String(chunk);
        if (stdout.includes('\n')) resolve(stdout.slice(0, stdout.indexOf('\n')));
      });
      child.on('exit', (code, signal) => reject(new Error(`the lock holder ended (${code ?? signal}) before answering: ${stderr}`)));
    });
    return { child, result: JSON.parse(line) as { held: true } | { busy: unknown } };
  }

  async function startHolder(name: string): Promise<ChildProcess> {
    const { child, result } = await startContender(name);
    expect(result).toEqual({ held: true });
    return child;
  }

  async function writeLock(owner: object): Promise<void> {
    await writeFile(lockFile(), JSON.stringify({ host: hostname(), acquiredAt: new Date().toISOString(), ...owner }));
  }

  it('never takes over the lock of a stopped owner that is alive, however old its heartbeat; takes it over once it is killed', async () => {
    const holder = await startHolder('a');
    holder.kill('SIGSTOP');
    await backdate(lockFile(), 10 * HOUR); // far beyond the two-minute staleness window

    const whileStopped = await locks().acquire('a', { waitMs: 200 });
    expect(whileStopped).toEqual({ busy: expect.objectContaining({ who: `pid ${holder.pid} on ${hostname()}` }) });
    expect(JSON.parse(await readFile(lockFile(), 'utf8'))).toMatchObject({ pid: holder.pid });

    // A fresh heartbeat: what frees the name below is its owner's death, not the lock's age.
    await utimes(lockFile(), new Date(), new Date());
    await kill(holder);
    const afterKill = await locks().acquire('a', { waitMs: 0 });
    expect('held' in afterKill).toBe(true);
    expect(JSON.parse(await readFile(lockFile(), 'utf8'))).toMatchObject({ pid: process.pid });
  });

  it('takes over a lock whose pid is alive but belongs to another process (pid reuse)', async () => {
    const other = await startSleeper();
    const identity = identityOf(other.pid!);
    await writeLock({ pid: other.pid, nonce: 'theirs', process: identity });
    expect(await locks().acquire('a', { waitMs: 0 })).toEqual({
      busy: expect.objectContaining({ who: `pid ${other.pid} on ${hostname()}` }),
    });

    // The same pid, started at another time: the process that wrote the lock is gone.
    await writeLock({ pid: other.pid, nonce: 'theirs', process: { ...identity, startTime: String(Number(identity.startTime) + 1) } });
    expect('held' in (await locks().acquire('a', { waitMs: 0 }))).toBe(true);
    expect(JSON.parse(await readFile(lockFile(), 'utf8'))).toMatchObject({ pid: process.pid });
  });

  it('takes over a lock written before this host last booted, even when its pid is alive now', async () => {
    const other = await startSleeper();
    await writeLock({ pid: other.pid, nonce: 'theirs', process: { ...identityOf(other.pid!), bootId: 'an-earlier-boot' } });
    expect('held' in (await locks().acquire('a', { waitMs: 0 }))).toBe(true);
  });

  it('takes over a lock with our own pid but not our nonce at once (an earlier incarnation, as in a restarted container)', async () => {
    await writeLock({ pid: process.pid, nonce: 'an-earlier-incarnation', process: identityOf(process.pid) });
    expect('held' in (await locks().acquire('a', { waitMs: 0 }))).toBe(true);
    expect(JSON.parse(await readFile(lockFile(), 'utf8'))).not.toMatchObject({ nonce: 'an-earlier-incarnation' });
  });

  it('cannot judge a pid recorded in another pid namespace (a container sharing the hostname): waits for staleness instead', async () => {
    // pid 1 and our own pid both exist here; in the other namespace they are other processes.
    for (const pid of [999_999, process.pid]) {
      await writeLock({
        pid,
        nonce: 'theirs',
        process: { startTime: '1', bootId: identityOf(process.pid).bootId, pidNamespace: 'pid:[1]' },
      });
      expect(await locks().acquire('a', { waitMs: 0 })).toEqual({ busy: expect.objectContaining({ who: `pid ${pid} on ${hostname()}` }) });
      await backdate(lockFile(), 10 * 60_000); // its heartbeat stopped long ago: abandoned, as on another host
      expect('held' in (await locks().acquire('a', { waitMs: 0 }))).toBe(true);
    }
  });

  it('lets exactly one of several real processes take over the lock of a killed one', async () => {
    const killed = await startHolder('a');
    await kill(killed);
    const contenders = await Promise.all([1, 2, 3, 4, 5, 6].map(() => startContender('a')));
    const winners = contenders.filter((c) => 'held' in c.result);
    expect(winners).toHaveLength(1);
    expect(JSON.parse(await readFile(lockFile(), 'utf8'))).toMatchObject({ pid: winners[0]!.child.pid });
  });

  it('does not take over a lock this process holds, from another lock instance of the same process', async () => {
    const first = await locks().acquire('a', { waitMs: 0 });
    expect('held' in first).toBe(true);
    expect(await locks().acquire('a', { waitMs: 0 })).toEqual({
      busy: expect.objectContaining({ who: `pid ${process.pid} on ${hostname()}` }),
    });
    if ('held' in first) await first.held.release();
  });

  it('records a nonce and the process identity next to pid, host and time', async () => {
    const result = await locks().acquire('a', { waitMs: 0 });
    expect(JSON.parse(await readFile(lockFile(), 'utf8'))).toEqual({
      pid: process.pid,
      host: hostname(),
      acquiredAt: expect.any(String),
      nonce: expect.stringMatching(/^[0-9a-f]{32}$/),
      process: { ...identityOf(process.pid), pidNamespace: readlinkSync('/proc/self/ns/pid') },
    });
    if ('held' in result) await result.held.release();
  });
});

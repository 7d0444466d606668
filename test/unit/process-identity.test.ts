import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, readlinkSync } from 'node:fs';

import { afterEach, describe, expect, it } from 'vitest';

import {
  currentProcessIdentity,
  processIdentity,
  processIsAlive,
  sharesPidNamespace,
} from '../../src/state/backends/file/process-identity.js';

/** Read here, not through the code under test, so that the tests check it against the kernel. */
function statOf(pid: number): { state: string; startTime: string } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0]!, startTime: fields[19]! };
}
const bootId = () => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();

/** A pid no process on this host has: above Linux's highest pid_max (2^22), and checked. */
function deadPid(): number {
  for (let pid = 4_194_305; ; pid++) {
    try {
      process.kill(pid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') return pid;
    }
  }
}

describe.runIf(existsSync('/proc/self/stat'))('process identity, read from /proc', () => {
  const children: ChildProcess[] = [];
  afterEach(async () => {
    for (const child of children.splice(0)) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    }
  });

  it("is a running process's start time and this boot's id", () => {
    expect(processIdentity(process.pid)).toStrictEqual({ startTime: statOf(process.pid).startTime, bootId: bootId() });
    expect(processIdentity(process.ppid)).toStrictEqual({ startTime: statOf(process.ppid).startTime, bootId: bootId() });
    expect(processIdentity(deadPid())).toBeUndefined();
  });

  it("is, for this process, its start time, this boot's id and its pid namespace", () => {
    const expected = { startTime: statOf(process.pid).startTime, bootId: bootId(), pidNamespace: readlinkSync('/proc/self/ns/pid') };
    expect(currentProcessIdentity()).toStrictEqual(expected);
    expect(currentProcessIdentity()).toStrictEqual(expected);
  });

  it('tells a pid namespace other than this one apart; a record without one is judged here', () => {
    expect(sharesPidNamespace(undefined)).toBe(true);
    expect(sharesPidNamespace({})).toBe(true);
    expect(sharesPidNamespace({ pidNamespace: readlinkSync('/proc/self/ns/pid') })).toBe(true);
    expect(sharesPidNamespace({ pidNamespace: 'pid:[1]' })).toBe(false);
  });

  it('judges a running process alive by its pid, its start time and the boot', () => {
    const own = currentProcessIdentity();
    expect(processIsAlive(process.pid)).toBe(true);
    expect(processIsAlive(process.pid, own)).toBe(true);
    expect(processIsAlive(process.pid, { startTime: own.startTime })).toBe(true); // recorded without a boot id
    expect(processIsAlive(process.pid, { bootId: own.bootId })).toBe(true); // recorded without a start time
  });

  it('judges a pid gone when it now belongs to a process started at another time, or the record is of an earlier boot', () => {
    const own = currentProcessIdentity();
    expect(processIsAlive(process.pid, { ...own, startTime: '1' })).toBe(false);
    expect(processIsAlive(process.pid, { ...own, bootId: '00000000-0000-0000-0000-000000000000' })).toBe(false);
  });

  it('judges a pid no process has gone, and never a process group (0 or below) alive', () => {
    expect(processIsAlive(deadPid())).toBe(false);
    expect(processIsAlive(0)).toBe(false);
    expect(processIsAlive(-1)).toBe(false);
    expect(processIsAlive(-process.pid)).toBe(false);
  });

  it('judges a process that exited but is not reaped yet (a zombie) gone', async () => {
    // The shell's background child exits at once; the shell then becomes `sleep`, which never reaps it.
    const parent = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] });
    children.push(parent);
    const [line] = (await once(parent.stdout!, 'data')) as [Buffer];
    const zombie = Number(line.toString().trim());
    for (let tries = 0; statOf(zombie).state !== 'Z'; tries++) {
      if (tries > 1000) throw new Error(`pid ${zombie} never became a zombie`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(processIsAlive(zombie)).toBe(false);
    expect(processIsAlive(zombie, processIdentity(zombie))).toBe(false);
  });
});

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

/**
 * What /proc shows is replaced here: a system without it (macOS, a container without /proc), one
 * that hides the boot id, and stat lines the kernel does not write. Each case loads the module
 * afresh, since it reads the boot id and its own identity once.
 */
const proc = vi.hoisted(() => ({
  /** Every /proc path fails with ENOENT, but those given in `files`. */
  hidden: false,
  files: new Map<string, string>(),
}));

vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  const missing = (path: string) => Object.assign(new Error(`ENOENT: no such file or directory, open '${path}'`), { code: 'ENOENT' });
  const readFileSync = ((path: unknown, ...rest: unknown[]) => {
    if (typeof path === 'string' && proc.files.has(path)) return proc.files.get(path);
    if (typeof path === 'string' && proc.hidden && path.startsWith('/proc/')) throw missing(path);
    return (real.readFileSync as (...a: unknown[]) => unknown)(path, ...rest);
  }) as typeof real.readFileSync;
  const readlinkSync = ((path: unknown, ...rest: unknown[]) => {
    if (typeof path === 'string' && proc.hidden && path.startsWith('/proc/')) throw missing(path);
    return (real.readlinkSync as (...a: unknown[]) => unknown)(path, ...rest);
  }) as typeof real.readlinkSync;
  return { ...real, readFileSync, readlinkSync, default: { ...real, readFileSync, readlinkSync } };
});

const load = async () => {
  vi.resetModules();
  return import('../../src/state/backends/file/process-identity.js');
};

/** A stat line as the kernel writes it, for `pid` in `state`, started at `startTime` ticks after boot. */
const statLine = (pid: number, state: string, startTime: string) =>
  `${pid} (node) ${state} 1 ${pid} ${pid} 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 ${startTime} 1000 100 18446744073709551615\n`;

describe('process identity where /proc does not show it', () => {
  beforeEach(() => {
    proc.hidden = false;
    proc.files.clear();
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  describe('no /proc at all', () => {
    beforeEach(() => {
      proc.hidden = true;
    });

    it('knows no identity, its own included, and judges any recorded namespace as its own', async () => {
      const { currentProcessIdentity, processIdentity, sharesPidNamespace } = await load();
      expect(processIdentity(process.pid)).toBeUndefined();
      expect(currentProcessIdentity()).toStrictEqual({});
      expect(sharesPidNamespace({ pidNamespace: 'pid:[4026531836]' })).toBe(true);
    });

    it('judges a pid by kill(2) alone: one that exists is alive, whatever identity was recorded', async () => {
      const { processIsAlive } = await load();
      expect(processIsAlive(process.pid)).toBe(true);
      expect(processIsAlive(process.pid, { startTime: '1', bootId: 'an-earlier-boot' })).toBe(true);
      expect(processIsAlive(4_194_305)).toBe(false); // above any pid_max: no such process
    });

    it("judges another user's process, which kill(2) may not signal (EPERM), alive; one that does not exist (ESRCH) gone", async () => {
      const { processIsAlive } = await load();
      const kill = vi.spyOn(process, 'kill');
      kill.mockImplementation(() => {
        throw Object.assign(new Error('kill EPERM'), { code: 'EPERM' });
      });
      expect(processIsAlive(4242)).toBe(true);
      kill.mockImplementation(() => {
        throw Object.assign(new Error('kill ESRCH'), { code: 'ESRCH' });
      });
      expect(processIsAlive(4242)).toBe(false);
    });
  });

  describe('processes shown, but not the boot id', () => {
    beforeEach(() => {
      proc.files.set('/proc/4242/stat', statLine(4242, 'S', '777'));
      proc.hidden = true;
    });

    it('records the start time alone', async () => {
      const { processIdentity } = await load();
      expect(processIdentity(4242)).toStrictEqual({ startTime: '777' });
    });

    it('does not judge a record by its boot id, which it cannot compare', async () => {
      const { processIsAlive } = await load();
      expect(processIsAlive(4242, { startTime: '777', bootId: 'some-boot' })).toBe(true);
      expect(processIsAlive(4242, { startTime: '778', bootId: 'some-boot' })).toBe(false);
    });
  });

  describe('a stat line it cannot read, and the states the kernel gives a process that exited', () => {
    it('takes a process whose stat line lacks its start time as not shown, and asks kill(2)', async () => {
      proc.files.set(`/proc/${process.pid}/stat`, `${process.pid} (node) S 1`);
      const { processIdentity, processIsAlive } = await load();
      expect(processIdentity(process.pid)).toBeUndefined();
      expect(processIsAlive(process.pid, { startTime: '1' })).toBe(true);
    });

    it.each([
      ['Z', 'a zombie'],
      ['X', 'dead'],
    ])('judges a process in state %s (%s) gone', async (state) => {
      proc.files.set('/proc/4242/stat', statLine(4242, state, '777'));
      const { processIsAlive } = await load();
      expect(processIsAlive(4242, { startTime: '777' })).toBe(false);
    });

    it('judges a process in any other state, stopped included, alive', async () => {
      proc.files.set('/proc/4242/stat', statLine(4242, 'T', '777'));
      const { processIsAlive } = await load();
      expect(processIsAlive(4242, { startTime: '777' })).toBe(true);
    });
  });
});

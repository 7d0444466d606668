import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, rmdir, stat, unlink, utimes } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';

import type { Clock } from '../clock.js';

export interface LockOwner {
  pid: number;
  host: string;
  acquiredAt: string;
}

export interface HeldLock {
  release(): Promise<void>;
}

export type LockResult = { held: HeldLock } | { busy: LockOwner | undefined };

export interface NameLocks {
  /** Waits up to `waitMs` for the name, taking over a lock whose owner is gone. */
  acquire(name: string, options: { waitMs: number }): Promise<LockResult>;
}

export interface LockOptions {
  clock: Clock;
  /** A lock whose file was not touched for this long is abandoned (its owner is on another host). */
  staleMs?: number;
  pollMs?: number;
  host?: string;
  pid?: number;
  isAlive?: (pid: number) => boolean;
}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One rotation per name across processes that share a state folder: `<dir>/locks/<name>.lock`,
 * created exclusively, holding the owner's pid, host and time, and touched while held. A lock is
 * abandoned when its owner's process is gone (same host) or it has not been touched for `staleMs`
 * (another host). Taking one over goes through a second exclusive step (a `.takeover` folder), so
 * two processes that both judge a lock abandoned cannot both end up holding it.
 */
export function fileNameLocks(dir: string, options: LockOptions): NameLocks {
  const staleMs = options.staleMs ?? 120_000;
  const pollMs = options.pollMs ?? 50;
  const host = options.host ?? hostname();
  const pid = options.pid ?? process.pid;
  const isAlive = options.isAlive ?? processIsAlive;
  const folder = join(dir, 'locks');
  const now = () => options.clock.now().getTime();

  async function readOwner(file: string): Promise<{ owner: LockOwner | undefined; touchedAt: number; raw: string } | undefined> {
    try {
      const [raw, info] = await Promise.all([readFile(file, 'utf8'), stat(file)]);
      let owner: LockOwner | undefined;
      try {
        owner = JSON.parse(raw) as LockOwner;
      } catch {
        owner = undefined; // damaged by hand: judged by age alone
      }
      return { owner, touchedAt: info.mtimeMs, raw };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  function abandoned(current: { owner: LockOwner | undefined; touchedAt: number }): boolean {
    if (current.owner && current.owner.host === host && current.owner.pid !== pid && !isAlive(current.owner.pid)) return true;
    return now() - current.touchedAt > staleMs;
  }

  async function takeOver(file: string, judged: string): Promise<void> {
    const guard = `${file}.takeover`;
    try {
      await mkdir(guard);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // A takeover that crashed half-way leaves its guard: clear it once it is clearly old.
      const info = await stat(guard).catch(() => undefined);
      if (info && now() - info.mtimeMs > 10_000) await rmdir(guard).catch(() => undefined);
      return;
    }
    try {
      const again = await readOwner(file);
      if (again && again.raw === judged && abandoned(again)) await unlink(file);
    } finally {
      await rmdir(guard).catch(() => undefined);
    }
  }

  /**
   * The lock appears with its owner already in it: written to a temporary file first, then linked
   * into place (link fails if the lock exists). A crash can never leave an empty lock, which could
   * only be judged by its age.
   */
  async function tryCreate(file: string): Promise<LockOwner | undefined> {
    const owner: LockOwner = { pid, host, acquiredAt: options.clock.now().toISOString() };
    const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    const handle = await open(temporary, 'wx', 0o600);
    try {
      await handle.writeFile(JSON.stringify(owner));
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await link(temporary, file);
      return owner;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
      throw error;
    } finally {
      await unlink(temporary).catch(() => undefined);
    }
  }

  function hold(file: string, owner: LockOwner): HeldLock {
    const heartbeat = setInterval(
      () => {
        const t = new Date(now());
        utimes(file, t, t).catch(() => undefined);
      },
      Math.max(1000, staleMs / 4),
    );
    heartbeat.unref();
    return {
      async release() {
        clearInterval(heartbeat);
        const current = await readOwner(file);
        // Only ever remove our own lock: it may have been taken over while we were stopped.
        if (
          current?.owner &&
          current.owner.pid === owner.pid &&
          current.owner.host === owner.host &&
          current.owner.acquiredAt === owner.acquiredAt
        ) {
          await unlink(file).catch(() => undefined);
        }
      },
    };
  }

  return {
    async acquire(name, { waitMs }) {
      await mkdir(folder, { recursive: true, mode: 0o700 });
      const file = join(folder, `${name}.lock`);
      const deadline = now() + waitMs;
      for (;;) {
        const owner = await tryCreate(file);
        if (owner) return { held: hold(file, owner) };
        const current = await readOwner(file);
        if (!current) continue; // released between our two looks
        if (abandoned(current)) {
          await takeOver(file, current.raw);
          continue;
        }
        if (now() >= deadline) return { busy: current.owner };
        await sleep(pollMs);
      }
    },
  };
}

import { randomBytes } from 'node:crypto';
import { closeSync } from 'node:fs';
import { mkdir, readdir, rmdir, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import type { Clock } from '../../../clock.js';
import { LockLostError } from '../../../errors.js';
import { forgetCrashLeftoverListings } from '../../../fs/atomic-write.js';
import type { HeldLock, LockHolder, NameLocks } from '../../name-locks.js';
import {
  createKeptRecord,
  createRecord,
  DEBRIS_NAME,
  isKept,
  type KeptRecord,
  type LockOwner,
  type LockRecord,
  readRecord,
  readRecordSync,
  removeIfUnchanged,
  touchIfOwned,
} from './lock-record.js';
import { currentProcessIdentity, type ProcessIdentity, processIsAlive, sharesPidNamespace } from './process-identity.js';

export type { LockOwner } from './lock-record.js';
export type { ProcessIdentity } from './process-identity.js';

export interface LockOptions {
  clock: Clock;
  /** A lock from another host whose file was not touched for this long is abandoned. */
  staleMs?: number;
  /** How often a held lock's file is touched; a quarter of `staleMs` (at least a second) by default. */
  heartbeatMs?: number;
  pollMs?: number;
  /** `host` and `pid` let a test play several processes in one. */
  host?: string;
  pid?: number;
  isAlive?: (pid: number, identity: ProcessIdentity | undefined) => boolean;
}

/**
 * A takeover takes milliseconds: a guard this old is debris whoever left it. Clearing a live
 * taker's guard is safe still, as a lock is only ever removed while it is the very one judged.
 */
const GUARD_STALE_MS = 10_000;

/**
 * The nonces of the locks and guards this process holds now, across lock instances. A record with
 * this process's pid and host and another nonce was written by an earlier process that had the same
 * pid: a restarted container's process is pid 1 every time. It is asked about a record's nonce,
 * which an older version's record lacks: it never holds `undefined`.
 */
const heldHere = new Set<string | undefined>();

/**
 * One rotation per name across processes that share a state folder: `<dir>/locks/<name>.lock`,
 * created exclusively, holding its owner (pid, host, time, a nonce, the process identity), touched
 * while held. A lock is abandoned when its owner on this host is gone (by its pid and identity,
 * however old its heartbeat: a stopped process is not a dead one), or when it was not touched for
 * `staleMs` (its owner is on another host, where we cannot look). Taking one over goes through an
 * exclusive guard (`<name>.lock.takeover`, holding its owner too, so that a killed taker's guard
 * is cleared at once), so that two processes judging a lock abandoned cannot both end up with it.
 */
export function fileNameLocks(dir: string, options: LockOptions): NameLocks {
  const staleMs = options.staleMs ?? 120_000;
  const heartbeatMs = options.heartbeatMs ?? Math.max(1000, staleMs / 4);
  const pollMs = options.pollMs ?? 50;
  const host = options.host ?? hostname();
  const pid = options.pid ?? process.pid;
  const isAlive = options.isAlive ?? processIsAlive;
  // A pid given by a test plays another process, whose identity we do not know.
  const identity = pid === process.pid ? currentProcessIdentity() : {};
  const folder = join(dir, 'locks');
  const now = () => options.clock.now().getTime();

  function newOwner(): LockOwner & { nonce: string } {
    const owner = { pid, host, acquiredAt: options.clock.now().toISOString(), nonce: randomBytes(16).toString('hex') };
    // Stryker disable next-line ConditionalExpression,EqualityOperator: an empty identity is read and judged as none (parseOwner, processIsAlive); it is left out only to keep the record short
    return Object.keys(identity).length > 0 ? { ...owner, process: identity } : owner;
  }

  /** Undefined when it cannot be told from here: another host or pid namespace, or no readable owner. */
  function ownerAlive(owner: LockOwner | undefined): boolean | undefined {
    if (!owner || owner.host !== host || !sharesPidNamespace(owner.process)) return undefined;
    if (owner.pid === pid) return heldHere.has(owner.nonce);
    return isAlive(owner.pid, owner.process);
  }

  /** A live owner on this host keeps its lock however old the heartbeat; one we cannot look at, until it is stale. */
  function abandoned(lock: LockRecord): boolean {
    if (lock.folder) return false;
    const alive = ownerAlive(lock.owner);
    return alive === undefined ? now() - lock.touchedAt > staleMs : !alive;
  }

  let debrisCleared: Promise<void> | undefined;

  /** Left by a killed process (or one stopped for long, which then tries again): never in anyone's way. */
  async function clearDebris(): Promise<void> {
    const names = (await readdir(folder)).filter((entry) => DEBRIS_NAME.test(entry));
    await Promise.all(
      names.map(async (entry) => {
        const path = join(folder, entry);
        const record = await readRecord(path).catch(() => undefined);
        // A folder so named is not removed either: unlink fails on it.
        if (record && (ownerAlive(record.owner) === false || now() - record.touchedAt > staleMs)) await unlink(path).catch(() => undefined);
      }),
    );
  }

  /** Whether it got anywhere: removed the abandoned lock, or cleared a guard in the way. */
  async function takeOver(file: string, judged: string): Promise<boolean> {
    const guard = `${file}.takeover`;
    const taker = newOwner();
    heldHere.add(taker.nonce);
    try {
      const ours = await createRecord(guard, taker);
      if (!ours) return await clearGuard(guard);
      try {
        const again = await readRecord(file);
        if (again?.raw === judged && abandoned(again)) {
          await removeIfUnchanged(file, judged);
          // A holder that is gone may have left half-written files beside what it was writing.
          forgetCrashLeftoverListings();
        }
        return true;
      } finally {
        await removeIfUnchanged(guard, ours);
      }
    } finally {
      heldHere.delete(taker.nonce);
    }
  }

  /** A guard whose owner is gone on this host is cleared at once; any other once it is clearly old. */
  async function clearGuard(guard: string): Promise<boolean> {
    const current = await readRecord(guard);
    if (!current) return true;
    if (ownerAlive(current.owner) !== false && now() - current.touchedAt <= GUARD_STALE_MS) return false;
    if (current.folder) await rmdir(guard).catch(() => undefined);
    else await removeIfUnchanged(guard, current.raw);
    return true;
  }

  function hold(name: string, file: string, owner: LockOwner & { nonce: string }, kept: KeptRecord): HeldLock {
    const beat = () => touchIfOwned(file, owner.nonce, new Date(now()));
    const heartbeat = setInterval(() => void beat().catch(() => undefined), heartbeatMs);
    heartbeat.unref();
    let released = false;
    let closed = false;
    return {
      // One stat, synchronously: it runs five times a rotation. The file is read only to say who
      // holds the lock now. The heartbeat keeps the lock fresh; checking it need not touch it.
      async assertHeld() {
        if (!released && isKept(file, kept)) return;
        throw new LockLostError(lostMessage(name, readRecordSync(file)));
      },
      // Again after a release that failed: it removes only a record that is still ours.
      async release() {
        released = true;
        clearInterval(heartbeat);
        try {
          if (isKept(file, kept)) await removeIfUnchanged(file, kept.raw);
        } finally {
          heldHere.delete(owner.nonce);
        }
        // Only now that the record is gone or not ours: until then the descriptor keeps its inode
        // from being reused by another record, which a release tried again would take for ours.
        if (!closed) closeSync(kept.fd);
        closed = true;
      },
    };
  }

  let folderMade: Promise<unknown> | undefined;
  /** Once per process; again only when the folder went away meanwhile. */
  const makeFolder = () =>
    (folderMade ??= mkdir(folder, { recursive: true, mode: 0o700 }).catch((error: unknown) => {
      folderMade = undefined;
      throw error;
    }));

  /** The lock record, made once more after making the folder again when it was removed meanwhile. */
  async function create(file: string, owner: LockOwner): Promise<KeptRecord | undefined> {
    try {
      return await createKeptRecord(file, owner);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      folderMade = undefined;
      await makeFolder();
      return createKeptRecord(file, owner);
    }
  }

  return {
    async acquire(name, { waitMs }) {
      await makeFolder();
      // Once per process: debris never blocks a lock (a blocking guard is cleared by takeover), and
      // listing the folder for every name would cost a run over n names n listings.
      debrisCleared ??= clearDebris().catch((error: unknown) => {
        debrisCleared = undefined;
        throw error;
      });
      await debrisCleared;
      const file = join(folder, `${name}.lock`);
      const deadline = now() + waitMs;
      for (;;) {
        const owner = newOwner();
        heldHere.add(owner.nonce);
        const created = await create(file, owner).catch((error: unknown) => {
          heldHere.delete(owner.nonce);
          throw error;
        });
        if (created) return { held: hold(name, file, owner, created) };
        heldHere.delete(owner.nonce);

        const current = await readRecord(file);
        if (!current) continue; // released between our two looks
        // A takeover blocked by another process's guard waits like a held lock, never spinning.
        if (abandoned(current) && (await takeOver(file, current.raw))) continue;
        if (now() >= deadline) return { busy: holderOf(current.owner) };
        await sleep(pollMs);
      }
    },
  };
}

function lostMessage(name: string, current: LockRecord | undefined): string {
  const holder = !current
    ? 'its lock file is gone'
    : current.owner
      ? `pid ${current.owner.pid} on ${current.owner.host} has held it since ${current.owner.acquiredAt}`
      : 'its lock file now holds no readable owner';
  return `lost the lock on "${name}": ${holder}; this process stops here, without side effects`;
}

/** How a lock file's owner reads in a message. */
function holderOf(owner: LockOwner | undefined): LockHolder | undefined {
  return owner ? { who: `pid ${owner.pid} on ${owner.host}`, since: owner.acquiredAt } : undefined;
}

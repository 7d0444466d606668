import { closeSync, fstatSync, openSync, readFileSync, statSync } from 'node:fs';
import { link, open, rename, unlink } from 'node:fs/promises';

import { openExclusive, writeAll } from '../../../fs/new-file.js';
import { uniqueHex12 } from '../../../fs/unique-name.js';
import type { ProcessIdentity } from './process-identity.js';

/** Who holds a lock (or a takeover guard): what an operator is shown, and what liveness is judged by. */
export interface LockOwner {
  pid: number;
  host: string;
  acquiredAt: string;
  /** Random, one per acquisition: "is this still my lock" compares it. Absent in older versions' locks. */
  nonce?: string;
  /** Absent where there is no /proc, and in older versions' locks. */
  process?: ProcessIdentity;
}

/** A lock or guard file as found. Such a file is never rewritten in place, only created and removed. */
export interface LockRecord {
  /** Undefined when the file holds no readable owner (damaged by hand, or empty): judged by its age. */
  owner: LockOwner | undefined;
  /** Compared before removing the file: every owner's nonce makes it unique. */
  raw: string;
  /** The file's mtime: its owner's heartbeat. */
  touchedAt: number;
  /** A folder where a file was expected: the takeover guard of versions before owner records. */
  folder: boolean;
}

/** Debris of a process killed half-way: a record not yet linked into place, or one set aside for removal. */
export const DEBRIS_NAME = /\.[0-9a-f]{12}\.(?:tmp|removing)$/;

const errorCode = (error: unknown) => (error as NodeJS.ErrnoException).code;

/** The owner a lock file's text names; undefined for anything else (not JSON, or JSON of another shape). */
export function parseOwner(raw: string): LockOwner | undefined {
  let value: unknown = null;
  try {
    value = JSON.parse(raw);
  } catch {
    // Not JSON: no owner, as null below.
  }
  // Only null (or no JSON) has no properties to read; any other value that is no owner record
  // (a number, a list, an object without the fields) lacks a pid, a host or a time below.
  if (value === null) return undefined;
  const { pid, host, acquiredAt, nonce, process: identity } = value as Record<string, unknown>;
  if (!Number.isSafeInteger(pid) || (pid as number) <= 0 || typeof host !== 'string' || typeof acquiredAt !== 'string') return undefined;
  const owner: LockOwner = { pid: pid as number, host, acquiredAt };
  // Stryker disable next-line ConditionalExpression: a nonce of another type equals none this process holds or compares with; the check keeps LockOwner's type true
  if (typeof nonce === 'string') owner.nonce = nonce;
  if (typeof identity === 'object' && identity !== null) {
    const { startTime, bootId, pidNamespace } = identity as Record<string, unknown>;
    owner.process = {
      ...(typeof startTime === 'string' && { startTime }),
      ...(typeof bootId === 'string' && { bootId }),
      ...(typeof pidNamespace === 'string' && { pidNamespace }),
    };
  }
  return owner;
}

/**
 * Content and mtime read through one open file, so that both belong to the same record. Lock files
 * are read and written synchronously: each step is a metadata call of
 * microseconds, cheaper than a round trip through the thread pool.
 */
export async function readRecord(file: string): Promise<LockRecord | undefined> {
  return readRecordSync(file);
}

export function readRecordSync(file: string): LockRecord | undefined {
  let fd;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const { mtimeMs } = fstatSync(fd);
    let raw: string;
    try {
      raw = readFileSync(fd, 'utf8');
    } catch (error) {
      // Stryker disable next-line StringLiteral: a folder's raw is never compared: a folder is never abandoned, and a guard folder is removed by rmdir
      if (errorCode(error) === 'EISDIR') return { owner: undefined, raw: '', touchedAt: mtimeMs, folder: true };
      throw error;
    }
    return { owner: parseOwner(raw), raw, touchedAt: mtimeMs, folder: false };
  } finally {
    closeSync(fd);
  }
}

/**
 * A record this process created and still has open: the open descriptor keeps its inode from being
 * reused, so "the file at the path is this inode, of this size" means "the record is still ours".
 */
export interface KeptRecord {
  raw: string;
  fd: number;
  dev: number;
  ino: number;
  size: number;
}

/**
 * Puts `owner` at `file` unless something is there already, and returns the content written. The
 * record is written to a temporary file first, then linked into place (link fails if `file`
 * exists), so that it never appears without its owner, which could only be judged by its age.
 *
 * No fsync: a process killed at any point leaves the page cache to the kernel, which writes it out.
 * Only a power loss can bring a record back empty (or not at all); an empty one has no owner and
 * is judged by its age (`staleMs`) instead of by its owner's pid and boot. That costs waiting, never
 * two holders, and saves one disk wait per lock, which is most of a rotation's lock cost.
 */
export async function createRecord(file: string, owner: LockOwner): Promise<string | undefined> {
  const kept = await createKeptRecord(file, owner);
  if (!kept) return undefined;
  closeSync(kept.fd);
  return kept.raw;
}

/** As createRecord, keeping the record's descriptor open for `isKept`; the caller closes `fd`. */
export async function createKeptRecord(file: string, owner: LockOwner): Promise<KeptRecord | undefined> {
  const raw = JSON.stringify(owner);
  const temporary = `${file}.${uniqueHex12()}.tmp`;
  const fd = await openExclusive(temporary, 0o600);
  let kept = false;
  try {
    writeAll(fd, Buffer.from(raw));
    try {
      await link(temporary, file);
    } catch (error) {
      // ENOENT: our temporary file was cleared as debris while this process was stopped; try again.
      if (errorCode(error) === 'EEXIST' || errorCode(error) === 'ENOENT') return undefined;
      throw error;
    }
    const { dev, ino, size } = fstatSync(fd);
    kept = true;
    return { raw, fd, dev, ino, size };
  } finally {
    if (!kept) closeSync(fd);
    await unlink(temporary).catch(() => undefined);
  }
}

/**
 * Whether `file` is still the record kept open: one stat. A record is never rewritten in place, so
 * another inode is another record (a takeover, or a copy of ours put back by hand), and another
 * size is ours edited by hand; either is not ours any more.
 */
export function isKept(file: string, kept: KeptRecord): boolean {
  try {
    const now = statSync(file);
    return now.ino === kept.ino && now.dev === kept.dev && now.size === kept.size;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return false;
    throw error;
  }
}

/**
 * Removes `file` only if it still holds `raw`. There is no unlink-if-unchanged, and a plain unlink
 * after a look could remove a new owner's lock created in between. So the file is first renamed
 * aside (atomic), then looked at: a record that is not the one judged is linked back into place.
 */
export async function removeIfUnchanged(file: string, raw: string): Promise<void> {
  const aside = `${file}.${uniqueHex12()}.removing`;
  try {
    await rename(file, aside);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return;
    throw error;
  }
  try {
    let moved: string;
    try {
      moved = readFileSync(aside, 'utf8');
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw error;
      moved = raw; // cleared as debris meanwhile: it was a dead owner's
    }
    if (moved !== raw) {
      try {
        await link(aside, file);
      } catch (error) {
        // Yet another record took its place meanwhile: its owner will find out, by assertHeld.
        if (errorCode(error) !== 'EEXIST') throw error;
      }
    }
  } finally {
    await unlink(aside).catch(() => undefined);
  }
}

/**
 * The heartbeat: touches `file` only while it holds `nonce`, and tells whether it did. The record
 * is read and touched through one open file, so that a record replaced between the two (always by
 * a new file) is never kept fresh by a process that no longer owns it.
 */
export async function touchIfOwned(file: string, nonce: string, at: Date): Promise<boolean> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return false;
    throw error;
  }
  try {
    // Stryker disable next-line StringLiteral: without an encoding readFile gives a Buffer, which JSON.parse reads as the same UTF-8 text
    if (parseOwner(await handle.readFile('utf8'))?.nonce !== nonce) return false;
    await handle.utimes(at, at);
    return true;
  } finally {
    await handle.close();
  }
}

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdir, rename, unlink, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

import { beforeEach, describe, expect, it, vi } from 'vitest';

import { systemClock } from '../../src/clock.js';
import { COMPACTION_GUARD, fileJournal } from '../../src/state/backends/file/file-journal.js';
import { fileNameLocks } from '../../src/state/backends/file/file-locks.js';
import { journalLog } from '../../src/state/backends/file/journal-log.js';
import { frameRecord } from '../../src/state/backends/file/journal-log-records.js';
import { anIntent } from '../helpers/journal-entries.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const WRITER = resolve(import.meta.dirname, '../fixtures/journal-writer.ts');

/** fdatasync, held back while `gate` is set: a sync "under way" for as long as the test wants. */
const syncs = vi.hoisted(() => ({ gate: undefined as Promise<void> | undefined, parked: 0 }));
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  const fdatasync = (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
    const gate = syncs.gate;
    if (!gate) return real.fdatasync(fd, callback);
    syncs.parked += 1;
    void gate.then(() => real.fdatasync(fd, callback));
  };
  return { ...real, fdatasync, default: { ...real, fdatasync } };
});

const settle = () => new Promise((r) => setImmediate(r));

describe('several processes on one journal log', () => {
  let dir: string;
  let folder: string;
  beforeEach(async () => {
    dir = await makeTempDir();
    folder = join(dir, 'journal');
    syncs.gate = undefined;
    syncs.parked = 0;
  });

  const guard = () => async () => {
    const result = await fileNameLocks(dir, { clock: systemClock }).acquire(COMPACTION_GUARD, { waitMs: 0 });
    return 'held' in result ? result.held : undefined;
  };

  it('an append whose sync is under way while another instance compacts the log lands in the live log', async () => {
    const writer = fileJournal(dir);
    await writer.write(anIntent('x', { reason: 'first' }));
    let open!: () => void;
    syncs.gate = new Promise((r) => (open = r));
    const pending = writer.write(anIntent('x', { reason: 'second' }));
    await settle();
    expect(syncs.parked).toBe(1);
    const compaction = journalLog(folder, guard()).compact();
    for (let i = 0; i < 2000 && syncs.parked < 2; i++) await new Promise((r) => setTimeout(r, 5));
    expect(syncs.parked, 'the compaction is under way: its own sync waits too').toBe(2);
    syncs.gate = undefined;
    open();
    await Promise.all([pending, compaction]);
    expect(await readdir(folder)).toEqual(['journal.log']);
    expect(await fileJournal(dir).read('x')).toMatchObject({ reason: 'second' });
    // And the writer's next append goes to the log now at the path, not the one set aside.
    await writer.write(anIntent('x', { reason: 'third' }));
    expect(await fileJournal(dir).read('x')).toMatchObject({ reason: 'third' });
    await writer.erase('x');
    expect(await readdir(folder)).toEqual([]);
  });

  it('an append to a log another process set aside (its compaction under way) is written again to the log at the path', async () => {
    const writer = fileJournal(dir);
    await writer.write(anIntent('x', { reason: 'first' }));
    // Another process's compaction, half-way: the log set aside and read, its live entry copied.
    const aside = join(folder, 'journal.log.0123456789ab.old');
    await rename(join(folder, 'journal.log'), aside);
    await writeFile(join(folder, 'journal.log'), frameRecord({ name: 'x', seq: 1, entry: anIntent('x', { reason: 'first' }) }));
    await writer.write(anIntent('x', { reason: 'second' }));
    // The compaction ends: the aside file goes, with whatever was appended to it after it was read.
    await unlink(aside);
    expect(await fileJournal(dir).read('x')).toMatchObject({ reason: 'second' });
    await writer.write(anIntent('x', { reason: 'third' }), { durable: false });
    expect(await fileJournal(dir).read('x')).toMatchObject({ reason: 'third' });
  });

  it('an append after another process removed the empty log creates it again', async () => {
    const writer = fileJournal(dir);
    await writer.write(anIntent('x'));
    await unlink(join(folder, 'journal.log'));
    await writer.write(anIntent('y'));
    expect(await fileJournal(dir).read('y')).toMatchObject({ name: 'y' });
  });

  it('a compaction that takes the guard of another process waits its turn: the busy one leaves the log as it is', async () => {
    const journal = fileJournal(dir);
    await journal.write(anIntent('a'));
    await journal.erase('a', { durable: false });
    await journal.write(anIntent('b'));
    const held = await fileNameLocks(dir, { clock: systemClock, pid: 1, host: 'elsewhere' }).acquire(COMPACTION_GUARD, { waitMs: 0 });
    expect('held' in held).toBe(true);
    await journal.erase('b');
    // Not compacted: the other process holds the guard.
    expect(await readdir(folder)).toEqual(['journal.log']);
    expect(await journal.names()).toEqual([]);
    if ('held' in held) await held.held.release();
    expect(await journal.names()).toEqual([]);
    expect(await readdir(folder)).toEqual([]);
  });

  it('a child process writing and erasing while this one compacts over and over loses no acknowledged write, and brings back no erasure', async () => {
    const child = spawn(process.execPath, [WRITER, dir, 'c', '120'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += String(chunk)));
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    const exited = once(child, 'exit');
    let done = false;
    void exited.then(() => (done = true));
    const mine = fileJournal(dir);
    const compactor = journalLog(folder, guard());
    let rounds = 0;
    for (; !done; rounds++) {
      // Entries of this process too, so that the log is sometimes empty and sometimes not.
      await mine.write(anIntent(`p-${rounds % 3}`));
      await compactor.compact();
      await mine.erase(`p-${rounds % 3}`, { durable: rounds % 2 === 0 });
      await new Promise((r) => setImmediate(r));
    }
    const [code] = await exited;
    expect(code, stderr).toBe(0);
    const acked = stdout.split('\n').filter(Boolean);
    expect(acked).toHaveLength(180);
    const reader = fileJournal(dir);
    for (let i = 0; i < 120; i++) {
      const entry = await reader.read(`c-${i}`);
      if (i % 2 === 0) expect(entry, `c-${i} was erased`).toBeUndefined();
      else expect(entry, `c-${i} was written`).toMatchObject({ name: `c-${i}`, phase: 'intent' });
    }
    expect((await reader.names()).sort()).toEqual(Array.from({ length: 60 }, (_, i) => `c-${2 * i + 1}`).sort());
    expect(rounds).toBeGreaterThan(0);
  });
});

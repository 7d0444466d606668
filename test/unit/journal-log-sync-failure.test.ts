import * as fs from 'node:fs';
import { join } from 'node:path';

import { beforeEach, describe, expect, it, vi } from 'vitest';

import { StateError } from '../../src/errors.js';
import { fileJournal } from '../../src/state/backends/file/file-journal.js';
import { anIntent } from '../helpers/journal-entries.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/** How many of the next fdatasync calls fail with EIO, as a failed writeback reports it (once). */
const inject = vi.hoisted(() => ({ failures: 0 }));

vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof fs>();
  const fdatasync = (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
    if (inject.failures === 0) return real.fdatasync(fd, callback);
    inject.failures -= 1;
    setImmediate(() => callback(Object.assign(new Error('EIO: injected'), { code: 'EIO' })));
  };
  return { ...real, default: { ...real, fdatasync }, fdatasync };
});

describe('the journal log after a failed fdatasync', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await makeTempDir();
    inject.failures = 0;
  });

  it('rejects the writers of the failed sync and those waiting for the next one, then writes to a fresh descriptor', async () => {
    const journal = fileJournal(dir);
    await journal.write(anIntent('before'));
    inject.failures = 1;
    // The first starts the sync that fails; the second, written meanwhile, waits for the next one on
    // the same descriptor, which would succeed for pages the kernel dropped.
    const results = await Promise.allSettled([journal.write(anIntent('one')), journal.write(anIntent('two'))]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    for (const r of results) expect((r as PromiseRejectedResult).reason).toBeInstanceOf(StateError);
    // Written again by its caller, a record is acknowledged by a sync of a fresh descriptor.
    await journal.write(anIntent('one', { reason: 'again' }));
    await journal.write(anIntent('after'));
    const reader = fileJournal(dir);
    expect(await reader.read('one')).toMatchObject({ reason: 'again' });
    expect(await reader.read('before')).toEqual(anIntent('before'));
    expect(await reader.read('after')).toEqual(anIntent('after'));
    expect(fs.existsSync(join(dir, 'journal', 'journal.log'))).toBe(true);
  });

  it.runIf(fs.existsSync('/proc/self/fd'))('closes each descriptor it gave up on, and only that one', async () => {
    const journal = fileJournal(dir);
    await journal.write(anIntent('a'));
    const before = fs.readdirSync('/proc/self/fd').length;
    for (let i = 0; i < 20; i++) {
      inject.failures = 1;
      await expect(journal.write(anIntent('a', { reason: `failed ${i}` }))).rejects.toBeInstanceOf(StateError);
      await journal.write(anIntent('a', { reason: `again ${i}` }));
    }
    expect(fs.readdirSync('/proc/self/fd').length).toBeLessThanOrEqual(before + 2);
    expect(await journal.read('a')).toMatchObject({ reason: 'again 19' });
    expect(await fileJournal(dir).read('a')).toMatchObject({ reason: 'again 19' });
  });
});

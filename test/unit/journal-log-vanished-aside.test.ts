import * as fs from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it, vi } from 'vitest';

import { fileJournal } from '../../src/state/backends/file/file-journal.js';
import { frameRecord } from '../../src/state/backends/file/journal-log-records.js';
import { anIntent } from '../helpers/journal-entries.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/** Runs once the reader opened `path`: another process's compaction ending just then. */
const hook = vi.hoisted(() => ({ path: '', then: () => {} }));

vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof fs>();
  const openSync = ((...args: Parameters<typeof real.openSync>) => {
    const fd = real.openSync(...args);
    if (args[0] === hook.path) hook.then();
    return fd;
  }) as typeof real.openSync;
  // Listed in order, so that the older aside file is opened first, whatever the file system's order.
  const readdirSync = ((path: fs.PathLike) => real.readdirSync(path).sort()) as typeof real.readdirSync;
  return { ...real, default: { ...real, openSync, readdirSync }, openSync, readdirSync };
});

describe('a reader of the journal log', () => {
  it('reads again when an aside file it listed is gone: its erasure must not be missed', async () => {
    const dir = await makeTempDir();
    const folder = join(dir, 'journal');
    await mkdir(folder);
    const older = join(folder, 'journal.log.000000000000.old');
    const newer = join(folder, 'journal.log.ffffffffffff.old');
    await writeFile(older, frameRecord({ name: 'a', seq: 1, entry: anIntent('a') }));
    await writeFile(newer, frameRecord({ name: 'a', seq: 2, erased: true }));
    // The compaction removes the older aside file, then the newer one, after the reader listed both
    // and opened the older one.
    hook.path = older;
    hook.then = () => {
      hook.path = '';
      fs.unlinkSync(older);
      fs.unlinkSync(newer);
    };
    expect(await fileJournal(dir).read('a')).toBeUndefined();
  });
});

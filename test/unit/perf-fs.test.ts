import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { forgetCrashLeftoverListings, writeFileAtomic } from '../../src/fs/atomic-write.js';
import { syncFolder } from '../../src/fs/folder-sync.js';
import { makeTempDir } from '../helpers/temp-dir.js';

describe('atomic writes without a folder listing per write', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await makeTempDir();
  });

  it('removes leftovers of every target found when the folder was first listed, each at its own write', async () => {
    await writeFile(join(dir, '.a.json.0123456789ab.tmp'), 'half-written a');
    await writeFile(join(dir, '.b.json.0123456789ab.tmp'), 'half-written b');
    await writeFileAtomic(join(dir, 'a.json'), 'a', { mode: 0o600 });
    expect((await readdir(dir)).sort()).toEqual(['.b.json.0123456789ab.tmp', 'a.json']);
    await writeFileAtomic(join(dir, 'b.json'), 'b', { mode: 0o600 });
    expect((await readdir(dir)).sort()).toEqual(['a.json', 'b.json']);
  });

  it('finds a leftover newer than the listing once the listings are forgotten (a crashed holder’s lock taken over)', async () => {
    await writeFileAtomic(join(dir, 'a.json'), 'a', { mode: 0o600 });
    await writeFile(join(dir, '.c.json.0123456789ab.tmp'), 'left by a holder that crashed after the listing');
    forgetCrashLeftoverListings();
    await writeFileAtomic(join(dir, 'c.json'), 'c', { mode: 0o600 });
    expect((await readdir(dir)).sort()).toEqual(['a.json', 'c.json']);
  });

  it('many writes into one folder at once all land, each whole, and leave no temporary file', async () => {
    const names = Array.from({ length: 40 }, (_, i) => `t${i}.json`);
    const results = await Promise.all(names.map((name) => writeFileAtomic(join(dir, name), `content of ${name}`, { mode: 0o600 })));
    expect(results.every((r) => r === 'created')).toBe(true);
    expect((await readdir(dir)).sort()).toEqual([...names].sort());
    for (const name of names) expect(await readFile(join(dir, name), 'utf8')).toBe(`content of ${name}`);
  });

  it('makes a folder again when it was removed after this process last wrote into it', async () => {
    const nested = join(dir, 'nested');
    await writeFileAtomic(join(nested, 'x'), '1', { mode: 0o600 });
    const { rm } = await import('node:fs/promises');
    await rm(nested, { recursive: true });
    expect(await writeFileAtomic(join(nested, 'x'), '2', { mode: 0o600 })).toBe('created');
    expect(await readFile(join(nested, 'x'), 'utf8')).toBe('2');
  });
});

describe('folder fsyncs shared by concurrent callers', () => {
  it('every caller is answered, and a failure reaches the callers of that fsync', async () => {
    const dir = await makeTempDir();
    await Promise.all(Array.from({ length: 20 }, () => syncFolder(dir)));
    await expect(Promise.all([syncFolder(join(dir, 'missing')), syncFolder(join(dir, 'missing'))])).rejects.toMatchObject({
      code: 'ENOENT',
    });
    await expect(syncFolder(dir)).resolves.toBeUndefined();
  });
});

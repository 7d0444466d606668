import { readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { createRecord, readRecord, removeIfUnchanged, touchIfOwned } from '../../src/state/backends/file/lock-record.js';
import { makeTempDir } from '../helpers/temp-dir.js';

describe('lock records', () => {
  let dir: string;
  let file: string;
  beforeEach(async () => {
    dir = await makeTempDir();
    file = join(dir, 'a.lock');
  });
  const owner = (nonce: string) => ({ pid: 4242, host: 'h1', acquiredAt: '2026-01-02T03:04:05.000Z', nonce });

  it('creates a record only where there is none, complete from the start, and leaves nothing else behind', async () => {
    const raw = await createRecord(file, owner('first'));
    expect(raw).toBeDefined();
    expect(await createRecord(file, owner('second'))).toBeUndefined();
    expect(await readRecord(file)).toMatchObject({ owner: owner('first'), raw, folder: false });
    expect(await readdir(dir)).toEqual(['a.lock']);
  });

  it('removes a record only while it is the one judged, and puts back one that replaced it meanwhile', async () => {
    const judged = (await createRecord(file, owner('judged')))!;
    await writeFile(file, JSON.stringify(owner('newer')));
    await removeIfUnchanged(file, judged);
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ nonce: 'newer' });

    await removeIfUnchanged(file, JSON.stringify(owner('newer')));
    expect(await readdir(dir)).toEqual([]);
  });

  it('touches a record only while it holds the nonce given', async () => {
    await createRecord(file, owner('mine'));
    const old = new Date(Date.now() - 3600_000);
    await utimes(file, old, old);
    const before = (await stat(file)).mtimeMs;
    expect(await touchIfOwned(file, 'someone-else', new Date())).toBe(false);
    expect((await stat(file)).mtimeMs).toBe(before);
    expect(await touchIfOwned(file, 'mine', new Date())).toBe(true);
    expect((await stat(file)).mtimeMs).toBeGreaterThan(before);
  });

  it('reads a record without an owner as such, to be judged by its age', async () => {
    await writeFile(file, '{"pid": 0, "host": "h1", "acquiredAt": "x"}'); // pid 0 would address a process group
    expect(await readRecord(file)).toMatchObject({ owner: undefined, folder: false });
  });
});

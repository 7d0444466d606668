import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { tokenIdProblem } from '../../src/common/token-id.js';
import { StateError } from '../../src/errors.js';
import { fileStateStore } from '../../src/state/backends/file/file-state-store.js';
import { resolveLineage } from '../../src/state/lineage.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const NOW = new Date('2026-11-22T12:00:00Z');

/** State records as files: what a record that cannot be read or written stops with, and what a valid one may hold. */
describe('state record files', () => {
  let dir: string;
  let file: string;
  beforeEach(async () => {
    dir = join(await makeTempDir(), 'state');
    file = join(dir, 'tokens', 'ingest.json');
    await mkdir(join(dir, 'tokens'), { recursive: true });
  });

  const record = () => resolveLineage({ name: 'ingest', id: 'p1' }, undefined, NOW).record;
  const readError = async () =>
    (await fileStateStore(dir)
      .read('ingest')
      .catch((error: unknown) => error)) as StateError;

  it('refuses a state file it cannot read (a folder in its place), naming it and why: never taken for a missing record', async () => {
    await mkdir(file);
    const error = await readError();
    expect(error).toBeInstanceOf(StateError);
    expect(error.message).toContain(file);
    expect(error.message).toContain('EISDIR');
  });

  it('erases a record durably, and a record that is not there is already erased', async () => {
    const store = fileStateStore(dir);
    await store.write(record());
    await store.erase('ingest');
    expect(await store.read('ingest')).toBeUndefined();
    await expect(store.erase('ingest')).resolves.toBeUndefined();
  });

  it('fails an erase it cannot make, naming the file and why: never taken for done', async () => {
    await mkdir(join(file, 'inside'), { recursive: true });
    const error = (await fileStateStore(dir)
      .erase('ingest')
      .catch((caught: unknown) => caught)) as StateError;
    expect(error).toBeInstanceOf(StateError);
    expect(error.message).toMatch(new RegExp(`^cannot erase .* ${file}: (EISDIR|EPERM)$`));
  });

  it('fails a write it cannot make, naming the file and why, with the error underneath', async () => {
    await mkdir(file);
    const error = (await fileStateStore(dir)
      .write(record())
      .catch((e: unknown) => e)) as StateError;
    expect(error).toBeInstanceOf(StateError);
    expect(error.message).toContain(file);
    const cause = error.cause as NodeJS.ErrnoException;
    expect(cause).toBeInstanceOf(Error);
    expect(cause.code).toEqual(expect.any(String));
    expect(error.message).toContain(cause.code);
  });

  it.each([
    ['null', 'null'],
    ['a number', '42'],
    ['a list', '[1]'],
  ])('refuses a file holding %s as a record of no version it reads', async (_what, content) => {
    await writeFile(file, content);
    const error = await readError();
    expect(error).toBeInstanceOf(StateError);
    expect(error.message).toMatch(/has version undefined; this token-rotator reads version 1/);
  });

  it('names a field of the wrong type as such, not as a missing one', async () => {
    await writeFile(file, JSON.stringify({ ...record(), currentId: 42 }));
    const error = await readError();
    expect(error).toBeInstanceOf(StateError);
    expect(error.message).toMatch(/currentId: expected string, got number/);
  });

  it('names every problem of a damaged record, each apart from the next', async () => {
    await writeFile(file, JSON.stringify({ ...record(), currentId: null, adoptedId: [] }));
    const error = await readError();
    expect(error).toBeInstanceOf(StateError);
    expect(error.message).toContain('(currentId: expected string, got null; adoptedId: expected string, got a list)');
  });

  it('says why a token id in the record is refused', async () => {
    await writeFile(file, JSON.stringify({ ...record(), currentId: '../tokens/other' }));
    const error = await readError();
    expect(error).toBeInstanceOf(StateError);
    expect(error.message).toContain(`currentId: ${tokenIdProblem('../tokens/other')}`);
  });

  it('reads times written with an offset from UTC, as another tool or a hand may write them', async () => {
    const written = { ...record(), adoptedAt: '2026-11-22T13:00:00+01:00', lastRotatedAt: '2026-11-22T07:00:00-05:00' };
    await writeFile(file, JSON.stringify(written));
    expect(await fileStateStore(dir).read('ingest')).toMatchObject({
      adoptedAt: '2026-11-22T13:00:00+01:00',
      lastRotatedAt: '2026-11-22T07:00:00-05:00',
    });
  });
});

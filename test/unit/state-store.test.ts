import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { StateError } from '../../src/errors.js';
import { fileStateStore } from '../../src/state/backends/file/file-state-store.js';
import { recordRotation, resolveLineage } from '../../src/state/lineage.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const NOW = new Date('2026-11-22T12:00:00Z');
const LATER = new Date('2026-12-10T12:00:00Z');

describe('lineage', () => {
  it('adopts the policy id for a name it has never seen', () => {
    const { record, adopted } = resolveLineage({ name: 'a', id: 'p1' }, undefined, NOW);
    expect(adopted).toBe('new');
    expect(record).toMatchObject({ currentId: 'p1', adoptedId: 'p1', adoptedAt: NOW.toISOString(), lastRotatedAt: null, lineage: [] });
  });

  it('follows the rotated id, not the policy id, once rotated', () => {
    const first = resolveLineage({ name: 'a', id: 'p1' }, undefined, NOW).record;
    const rotated = recordRotation(first, {
      newId: 'n1',
      newExpiresAt: LATER,
      existingTokenExpiresAt: new Date(NOW.getTime() + 3600_000),
      now: NOW,
      sinks: {},
    });
    const again = resolveLineage({ name: 'a', id: 'p1' }, rotated, LATER);
    expect(again.adopted).toBeUndefined();
    expect(again.record.currentId).toBe('n1');
    expect(again.record.lineage).toEqual([{ id: 'p1', replacedAt: NOW.toISOString(), expiresAt: '2026-11-22T13:00:00.000Z' }]);
  });

  it('adopts a policy id that is in no part of the lineage, keeping the old lineage for the record', () => {
    const first = resolveLineage({ name: 'a', id: 'p1' }, undefined, NOW).record;
    const { record, adopted } = resolveLineage({ name: 'a', id: 'other' }, first, LATER);
    expect(adopted).toBe('repointed');
    expect(record.currentId).toBe('other');
    expect(record.lineage[0]!.id).toBe('p1');
  });

  it('does not list the same id twice when the service answers with the same id', () => {
    const first = resolveLineage({ name: 'a', id: 'p1' }, undefined, NOW).record;
    const rotated = recordRotation(first, { newId: 'p1', newExpiresAt: LATER, existingTokenExpiresAt: NOW, now: NOW, sinks: {} });
    expect(rotated.lineage).toEqual([]);
    expect(rotated.lastRotatedAt).toBe(NOW.toISOString());
  });
});

describe('file state store', () => {
  let dir: string;
  beforeEach(async () => {
    dir = join(await makeTempDir(), 'state');
  });

  it('round-trips a record in a 0600 file inside 0700 folders', async () => {
    const store = fileStateStore(dir);
    const record = resolveLineage({ name: 'ingest', id: 'p1' }, undefined, NOW).record;
    await store.write(record);
    expect(await store.read('ingest')).toEqual(record);
    expect((await stat(join(dir, 'tokens', 'ingest.json'))).mode & 0o777).toBe(0o600);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
  });

  it('answers undefined for a name it has no record of', async () => {
    expect(await fileStateStore(dir).read('nobody')).toBeUndefined();
  });

  it.each([
    ['truncated JSON', '{"version": 1, "name": "ingest", "curr', /is not valid JSON \(truncated or damaged\)/],
    ['another version', '{"version": 7}', /has version 7; this token-rotator reads version 1/],
    ['a damaged record', '{"version": 1, "name": "ingest"}', /is damaged \(currentId: required/],
  ])('refuses %s, naming the file and what to do', async (_what, content, message) => {
    await mkdir(join(dir, 'tokens'), { recursive: true });
    await writeFile(join(dir, 'tokens', 'ingest.json'), content);
    const error = (await fileStateStore(dir)
      .read('ingest')
      .catch((e: unknown) => e)) as StateError;
    expect(error).toBeInstanceOf(StateError);
    expect(error.message).toMatch(message);
    expect(error.message).toContain(join(dir, 'tokens', 'ingest.json'));
    expect(error.message).toMatch(/restore it from a backup, or move it aside/);
    // and the damaged file is left exactly as it was
    expect(await readFile(join(dir, 'tokens', 'ingest.json'), 'utf8')).toBe(content);
  });
});

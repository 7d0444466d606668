import { chmod, mkdir, readFile, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { writeFileAtomic } from '../../src/fs/atomic-write.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

describe('folders that writeFileAtomic creates', () => {
  let dir: string;
  let umask: number;
  beforeEach(async () => {
    dir = await realpath(await makeTempDir());
    // The narrowest common umask: the modes below must hold despite it.
    umask = process.umask(0o077);
  });
  afterEach(() => {
    process.umask(umask);
  });

  it('are 0700 for a 0600 file', async () => {
    await writeFileAtomic(join(dir, 'a/b/f'), 'x', { mode: 0o600 });
    expect(await modeOf(join(dir, 'a'))).toBe(0o700);
    expect(await modeOf(join(dir, 'a/b'))).toBe(0o700);
    expect(await modeOf(join(dir, 'a/b/f'))).toBe(0o600);
  });

  it('are 0750 for a 0640 file, so the group can reach what it may read', async () => {
    await writeFileAtomic(join(dir, 'a/b/f'), 'x', { mode: 0o640 });
    expect(await modeOf(join(dir, 'a'))).toBe(0o750);
    expect(await modeOf(join(dir, 'a/b'))).toBe(0o750);
    expect(await modeOf(join(dir, 'a/b/f'))).toBe(0o640);
  });

  it('are 0700 when the file gives the group no read access', async () => {
    await writeFileAtomic(join(dir, 'a/f'), 'x', { mode: 0o620 });
    expect(await modeOf(join(dir, 'a'))).toBe(0o700);
  });

  it('leave folders that already existed as they were', async () => {
    await mkdir(join(dir, 'kept/narrow'), { recursive: true });
    await chmod(join(dir, 'kept'), 0o755);
    await chmod(join(dir, 'kept/narrow'), 0o700);
    await writeFileAtomic(join(dir, 'kept/narrow/new/f'), 'x', { mode: 0o640 });
    expect(await modeOf(join(dir, 'kept'))).toBe(0o755);
    expect(await modeOf(join(dir, 'kept/narrow'))).toBe(0o700);
    expect(await modeOf(join(dir, 'kept/narrow/new'))).toBe(0o750);
  });

  it('take an explicit dirMode, as state files do', async () => {
    await writeFileAtomic(join(dir, 's/t/record.json'), '{}', { mode: 0o600, dirMode: 0o700 });
    expect(await modeOf(join(dir, 's'))).toBe(0o700);
    expect(await modeOf(join(dir, 's/t'))).toBe(0o700);
    expect(await readFile(join(dir, 's/t/record.json'), 'utf8')).toBe('{}');
  });
});

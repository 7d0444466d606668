import { mkdir, realpath } from 'node:fs/promises';
import { join } from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { fileSinkType } from '../../src/sinks/file/file-sink.js';
import { makeTempDir } from '../helpers/temp-dir.js';

function parse(dir: string, raw: Record<string, unknown>) {
  return fileSinkType.parse({ type: 'file', ...raw }, { policyDir: dir });
}

function issues(dir: string, raw: Record<string, unknown>) {
  const parsed = parse(dir, raw);
  if (parsed.ok) throw new Error('expected the sink to be refused');
  return parsed.issues;
}

describe('file sink path checks at parse time', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await realpath(await makeTempDir());
  });

  it('refuses a NUL byte, which no file system accepts in a path', () => {
    expect(issues(dir, { path: 'secrets/app\0.token' })).toEqual([
      { path: 'path', message: 'must not contain a NUL byte (\\0); no file system accepts one in a path' },
    ]);
  });

  it('refuses a file name longer than file systems allow', () => {
    expect(issues(dir, { path: `secrets/${'é'.repeat(128)}` })).toEqual([
      { path: 'path', message: 'has a component longer than 255 bytes, which file systems do not accept' },
    ]);
  });

  it('refuses a path that is an existing folder', async () => {
    await mkdir(join(dir, 'folder.token'));
    expect(issues(dir, { path: 'folder.token' })).toEqual([
      { path: 'path', message: `${join(dir, 'folder.token')} is a folder; path must name a file` },
    ]);
    expect(issues(dir, { path: '.' })).toEqual([
      { path: 'path', message: expect.stringMatching(/is a folder; path must name a file/) as string },
    ]);
  });

  it('refuses a path ending in a slash, which names a folder', () => {
    expect(issues(dir, { path: 'secrets/' })).toEqual([{ path: 'path', message: 'ends with /; path must name a file, not a folder' }]);
  });

  it('normalises empty and dot components, relative and absolute', () => {
    const relative = parse(dir, { path: 'a//b/./c/../app.token' });
    const absolute = parse(dir, { path: `${dir}//a/./b//app.token` });
    expect(relative.ok && relative.config.path).toBe(join(dir, 'a/b/app.token'));
    expect(absolute.ok && absolute.config.path).toBe(join(dir, 'a/b/app.token'));
  });
});

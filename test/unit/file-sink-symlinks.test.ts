import { lstat, mkdir, readdir, readFile, realpath, rename, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { parsePolicy } from '../../src/config/load-policy.js';
import { ConfigError, SinkError } from '../../src/errors.js';
import { Secret } from '../../src/secret.js';
import { type FileSinkConfig, fileSinkType } from '../../src/sinks/file/file-sink.js';
import { sinkLocalPath, sinkTarget } from '../../src/sinks/registry.js';
import { boundFileSink, testMeta } from '../helpers/file-sink.js';
import { expectNoLeak } from '../helpers/leaks.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const SECRET = 'xaat-canary-file-sink-links-0300';
const meta = testMeta();

function parse(dir: string, raw: Record<string, unknown>) {
  return fileSinkType.parse({ type: 'file', ...raw }, { policyDir: dir });
}

function config(dir: string, raw: Record<string, unknown>): FileSinkConfig {
  const parsed = parse(dir, raw);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.config;
}

function issues(dir: string, raw: Record<string, unknown>) {
  const parsed = parse(dir, raw);
  if (parsed.ok) throw new Error('expected the sink to be refused');
  return parsed.issues;
}

function policyProblems(dir: string, sinks: [string, string]): string[] {
  const text = `
version: 1
tokens:
  - name: first
    id: tok-a
    sinks: [${sinks[0]}]
  - name: second
    id: tok-b
    sinks: [${sinks[1]}]
`;
  try {
    parsePolicy(text, join(dir, 'rotation.yaml'));
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
  throw new Error('expected the policy to be refused');
}

describe('file sink paths through symbolic links', () => {
  let dir: string;
  beforeEach(async () => {
    // The temporary folder itself may be reached through a link (macOS: /var -> /private/var).
    dir = await realpath(await makeTempDir());
    await mkdir(join(dir, 'real'));
    await symlink(join(dir, 'real'), join(dir, 'link'));
  });

  it('refuses two tokens writing one file through a symlinked folder', () => {
    expect(policyProblems(dir, ['{ type: file, path: real/app.token }', '{ type: file, path: link/app.token }'])).toEqual([
      expect.stringMatching(/^tokens\[1\]\.sinks\[0\]\.path: .*link is a symbolic link to .*real/),
    ]);
  });

  it('refuses two tokens writing one file through a symlinked folder that the second sink allows', () => {
    expect(
      policyProblems(dir, ['{ type: file, path: real/app.token }', '{ type: file, path: link/app.token, allowSymlinks: true }']),
    ).toEqual(['tokens[1].sinks[0]: writes to the same place as tokens[0].sinks[0]']);
  });

  it('refuses a symlinked folder in a sink path, naming the link, where it points, and the option', () => {
    expect(issues(dir, { path: 'link/app.token' })).toEqual([
      {
        path: 'path',
        message: expect.stringContaining(`${join(dir, 'link')} is a symbolic link to ${join(dir, 'real')}`) as string,
      },
    ]);
    expect(issues(dir, { path: 'link/app.token' })[0]!.message).toMatch(/allowSymlinks: true/);
  });

  it('refuses a symlink at the file itself, and any link deeper in the path', async () => {
    await writeFile(join(dir, 'real/app.token'), 'old');
    await symlink('real/app.token', join(dir, 'app.token'));
    expect(issues(dir, { path: 'app.token' })).toEqual([
      { path: 'path', message: expect.stringContaining(`${join(dir, 'app.token')} is a symbolic link to real/app.token`) as string },
    ]);
    await symlink('../real', join(dir, 'real/loop'));
    expect(issues(dir, { path: 'link/loop/x.token' })[0]!.message).toMatch(
      /link is a symbolic link .*loop is a symbolic link to \.\.\/real/,
    );
  });

  it('refuses a loop of symbolic links even when links are allowed', async () => {
    await symlink('loop-b', join(dir, 'loop-a'));
    await symlink('loop-a', join(dir, 'loop-b'));
    expect(issues(dir, { path: 'loop-a', allowSymlinks: true })).toEqual([
      { path: 'path', message: `${join(dir, 'loop-a')} leads into a loop of symbolic links` },
    ]);
  });

  it('refuses allowSymlinks that is not a boolean', () => {
    expect(issues(dir, { path: 'a.token', allowSymlinks: 'yes' })).toEqual([
      { path: 'allowSymlinks', message: 'expected boolean, got string' },
    ]);
  });

  it('identifies a sink by its real location, also below folders that do not exist yet', () => {
    const through = config(dir, { path: 'link/new/deeper/app.token', allowSymlinks: true });
    const direct = config(dir, { path: 'real/new/deeper/app.token' });
    expect(through.realPath).toBe(join(dir, 'real/new/deeper/app.token'));
    expect(sinkTarget(through)).toBe(sinkTarget(direct));
    expect(sinkTarget(through)).toBe(`file:${join(dir, 'real/new/deeper/app.token')}`);
    expect(sinkLocalPath(through)).toBe(join(dir, 'real/new/deeper/app.token'));
    expect(sinkLocalPath(direct)).toBe(join(dir, 'real/new/deeper/app.token'));
  });

  it('identifies a symlinked file by the file it points to, when links are allowed', async () => {
    await writeFile(join(dir, 'real/app.token'), 'old');
    await symlink('link/app.token', join(dir, 'app.token'));
    const through = config(dir, { path: 'app.token', allowSymlinks: true });
    expect(through.realPath).toBe(join(dir, 'real/app.token'));
    expect(fileSinkType.localPath?.(through)).toBe(join(dir, 'real/app.token'));
  });

  it('with allowSymlinks, writes at the real location and leaves the links in place', async () => {
    await writeFile(join(dir, 'real/app.token'), 'old', { mode: 0o600 });
    await symlink('link/app.token', join(dir, 'app.token'));
    const file = boundFileSink(config(dir, { path: 'app.token', allowSymlinks: true }));
    expect(await file.write(new Secret(SECRET), meta, {})).toBe('updated');
    expect(await readFile(join(dir, 'real/app.token'), 'utf8')).toBe(SECRET);
    expect((await lstat(join(dir, 'app.token'))).isSymbolicLink()).toBe(true);
    expect((await lstat(join(dir, 'link'))).isSymbolicLink()).toBe(true);

    const folder = boundFileSink(config(dir, { path: 'link/sub/other.token', allowSymlinks: true }));
    expect(await folder.write(new Secret(SECRET), meta, {})).toBe('created');
    expect(await readFile(join(dir, 'real/sub/other.token'), 'utf8')).toBe(SECRET);
    expect((await readdir(dir)).sort()).toEqual(['app.token', 'link', 'real']);
    expect((await readdir(join(dir, 'real'))).sort()).toEqual(['app.token', 'sub']);
  });

  it('with allowSymlinks, follows a link to a file that does not exist yet, relative to the folder the link is really in', async () => {
    await mkdir(join(dir, 'real/inner'));
    await symlink(join(dir, 'real/inner'), join(dir, 'inner'));
    await symlink('../later.token', join(dir, 'real/inner/pending.token'));
    const sinkConfig = config(dir, { path: 'inner/pending.token', allowSymlinks: true });
    expect(sinkConfig.realPath).toBe(join(dir, 'real/later.token'));
    expect(await boundFileSink(sinkConfig).write(new Secret(SECRET), meta, {})).toBe('created');
    expect(await readFile(join(dir, 'real/later.token'), 'utf8')).toBe(SECRET);
    expect((await lstat(join(dir, 'real/inner/pending.token'))).isSymbolicLink()).toBe(true);
  });

  it('refuses at write time a folder that became a symlink after the policy was checked, and leaves its target alone', async () => {
    const file = boundFileSink(config(dir, { path: 'later/app.token' }));
    await mkdir(join(dir, 'elsewhere'));
    await symlink(join(dir, 'elsewhere'), join(dir, 'later'));
    const error = await file.write(new Secret(SECRET), meta, {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SinkError);
    expect((error as Error).message).toBe(
      `cannot write file later/app.token: ${join(dir, 'later')} is a symbolic link to ${join(dir, 'elsewhere')}; refusing to write through it (set allowSymlinks: true on the sink to follow links)`,
    );
    expect(await readdir(join(dir, 'elsewhere'))).toEqual([]);
    expectNoLeak({ error: (error as Error).message }, [SECRET]);
  });

  it('refuses at write time a folder swapped for a symlink just after a read looked at it (reads share what they saw for a second, writes never)', async () => {
    const file = boundFileSink(config(dir, { path: 'swapped/app.token' }));
    await mkdir(join(dir, 'swapped'));
    expect(await file.read()).toBeUndefined(); // looks at the folder: not a link
    await rename(join(dir, 'swapped'), join(dir, 'moved-away'));
    await mkdir(join(dir, 'elsewhere'));
    await symlink(join(dir, 'elsewhere'), join(dir, 'swapped'));
    const error = await file.write(new Secret(SECRET), meta, {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SinkError);
    expect((error as Error).message).toMatch(/is a symbolic link to .*refusing to write through it/);
    expect(await readdir(join(dir, 'elsewhere'))).toEqual([]);
  });
});

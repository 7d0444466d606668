import { chmod, lstat, mkdir, readdir, readFile, realpath, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { parse } from 'dotenv';
import { beforeEach, describe, expect, it } from 'vitest';

import { SinkError } from '../../src/errors.js';
import { Secret } from '../../src/secret.js';
import { type FileSinkConfig, fileSinkType } from '../../src/sinks/file/file-sink.js';
import { boundFileSink, testMeta } from '../helpers/file-sink.js';
import { expectNoLeak } from '../helpers/leaks.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const SECRET = 'xaat-canary-file-sink-0200';
const meta = testMeta({ expiresAt: new Date('2026-12-22T12:00:00Z') });

function sink(dir: string, raw: Record<string, unknown>) {
  const parsed = fileSinkType.parse({ type: 'file', ...raw }, { policyDir: dir });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return { sink: boundFileSink(parsed.config as FileSinkConfig), config: parsed.config as FileSinkConfig };
}

describe('file sink', () => {
  let dir: string;
  beforeEach(async () => {
    // The temporary folder itself may be reached through a link (macOS: /var -> /private/var).
    dir = await realpath(await makeTempDir());
  });

  it('writes exactly the secret, mode 0600, creating missing folders 0700', async () => {
    const { sink: s, config } = sink(dir, { path: 'deep/er/ingest.token' });
    expect(await s.write(new Secret(SECRET), meta, {})).toBe('created');
    expect(await readFile(config.path, 'utf8')).toBe(SECRET);
    expect((await stat(config.path)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'deep'))).mode & 0o777).toBe(0o700);
    expect((await stat(join(dir, 'deep/er'))).mode & 0o777).toBe(0o700);
  });

  it('answers unchanged for the same secret, updated for a new one, and leaves no temporary files', async () => {
    const { sink: s, config } = sink(dir, { path: 'a.token' });
    await s.write(new Secret(SECRET), meta, {});
    expect(await s.write(new Secret(SECRET), meta, {})).toBe('unchanged');
    expect(await s.write(new Secret(`${SECRET}-next`), meta, {})).toBe('updated');
    expect(await readFile(config.path, 'utf8')).toBe(`${SECRET}-next`);
    expect(await readdir(dir)).toEqual(['a.token']);
  });

  it('removes temporary files that a crashed write left behind, since they may hold a secret', async () => {
    await writeFile(join(dir, '.a.token.0123456789ab.tmp'), 'xaat-canary-half-written');
    await writeFile(join(dir, '.other.token.0123456789ab.tmp'), 'not ours');
    const { sink: s } = sink(dir, { path: 'a.token' });
    await s.write(new Secret(SECRET), meta, {});
    expect((await readdir(dir)).sort()).toEqual(['.other.token.0123456789ab.tmp', 'a.token']);
  });

  it('writes env and json formats', async () => {
    const env = sink(dir, { path: 'a.env', format: 'env', key: 'INGEST_TOKEN' });
    await env.sink.write(new Secret(SECRET), meta, {});
    expect(await readFile(env.config.path, 'utf8')).toBe(`INGEST_TOKEN=${SECRET}\n`);
    const json = sink(dir, { path: 'a.json', format: 'json' });
    await json.sink.write(new Secret(SECRET), meta, {});
    expect(JSON.parse(await readFile(json.config.path, 'utf8'))).toEqual({
      name: 'ingest',
      id: 'tok-1',
      expiresAt: '2026-12-22T12:00:00.000Z',
      rotationId: 'rotation-1',
      rotatedAt: '2026-11-22T12:00:00.000Z',
      token: SECRET,
    });
  });

  it('quotes an env value that the dotenv dialect would otherwise misread, so that dotenv reads it back unchanged', async () => {
    const env = sink(dir, { path: 'q.env', format: 'env' });
    await env.sink.write(new Secret('abc def"$x'), meta, {});
    const written = await readFile(env.config.path, 'utf8');
    expect(written).toBe(`AXIOM_TOKEN='abc def"$x'\n`);
    expect(parse(written)).toEqual({ AXIOM_TOKEN: 'abc def"$x' });
  });

  it('applies a configured group-readable mode despite the umask', async () => {
    const { sink: s, config } = sink(dir, { path: 'g.token', mode: '0640' });
    await s.write(new Secret(SECRET), meta, {});
    expect((await stat(config.path)).mode & 0o777).toBe(0o640);
  });

  it('lets the group reach a group-readable file through the folders it creates, and no further', async () => {
    await mkdir(join(dir, 'existing'), { mode: 0o700 });
    await chmod(join(dir, 'existing'), 0o711);
    const { sink: s } = sink(dir, { path: 'existing/shared/deeper/g.token', mode: '0640' });
    await s.write(new Secret(SECRET), meta, {});
    expect((await stat(join(dir, 'existing'))).mode & 0o777).toBe(0o711);
    expect((await stat(join(dir, 'existing/shared'))).mode & 0o777).toBe(0o750);
    expect((await stat(join(dir, 'existing/shared/deeper'))).mode & 0o777).toBe(0o750);
  });

  it('refuses to write through a symlink that appeared after the policy was checked, and leaves its target alone', async () => {
    const { sink: s } = sink(dir, { path: 'link.token' });
    await writeFile(join(dir, 'elsewhere'), 'precious');
    await symlink(join(dir, 'elsewhere'), join(dir, 'link.token'));
    const error = await s.write(new Secret(SECRET), meta, {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SinkError);
    expect((error as Error).message).toMatch(/link\.token is a symbolic link to .*elsewhere; refusing to write through it/);
    expect(await readFile(join(dir, 'elsewhere'), 'utf8')).toBe('precious');
    expect((await lstat(join(dir, 'link.token'))).isSymbolicLink()).toBe(true);
    expectNoLeak({ error: String((error as Error).message) }, [SECRET]);
  });

  it('names a folder blocked by a file, without the secret', async () => {
    await writeFile(join(dir, 'blocked'), 'a file, not a folder');
    const { sink: s } = sink(dir, { path: 'blocked/a.token' });
    const error = (await s.write(new Secret(SECRET), meta, {}).catch((e: unknown) => e)) as SinkError;
    expect(error.code).toBe('ERR_SINK');
    expect(error.message).toMatch(/^cannot write file blocked\/a.token: a file is in the way of a folder/);
    expectNoLeak({ error: error.message }, [SECRET]);
  });

  it('refuses a target that became a folder after the policy was checked', async () => {
    const { sink: s } = sink(dir, { path: 'folder.token' });
    await mkdir(join(dir, 'folder.token'));
    await expect(s.write(new Secret(SECRET), meta, {})).rejects.toThrow(/not a regular file/);
  });

  it('describes itself by path, never by content', () => {
    expect(fileSinkType.describe(sink(dir, { path: 'x/y.token' }).config)).toBe('file x/y.token');
  });
});

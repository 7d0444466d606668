import { execFile, execFileSync } from 'node:child_process';
import { chmod, mkdir, readdir, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { type FileSinkConfig, fileSinkType } from '../../src/sinks/file/file-sink.js';
import type { SinkClient } from '../../src/sinks/sink.js';
import { captureLog } from '../helpers/rotator-client.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/**
 * The file sink's preflight, which a rotation runs before regenerating: whatever would make the
 * write fail must fail here, without creating anything, or a new secret is made and stranded.
 */
describe('file sink preflight', () => {
  let dir: string;
  let client: SinkClient<FileSinkConfig>;
  beforeEach(async () => {
    // The temporary folder itself may be reached through a link (macOS: /var -> /private/var).
    dir = await realpath(await makeTempDir());
    client = await fileSinkType.open({ logger: captureLog().logger, env: {}, reference: () => undefined });
  });
  afterEach(async () => {
    await chmod(dir, 0o700).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });

  /** Parsed while the path is clean: what follows is the file system changing after the policy was read. */
  function configOf(raw: Record<string, unknown>): FileSinkConfig {
    const parsed = fileSinkType.parse({ type: 'file', ...raw }, { policyDir: dir });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    return parsed.config;
  }

  const failure = (call: Promise<unknown>): Promise<string | undefined> =>
    call.then(
      () => undefined,
      (e: unknown) => (e as Error).message,
    );

  it('passes for a file to be created in missing folders, and creates nothing', async () => {
    await expect(client.preflight!(configOf({ path: 'a/b/c.token' }), {})).resolves.toBeUndefined();
    expect(await readdir(dir)).toEqual([]);
  });

  it('refuses a folder the process may not create files in (chmod 0555), as the rotator would run: not as root', async () => {
    const readOnly = join(dir, 'read-only');
    await mkdir(readOnly);
    await chmod(readOnly, 0o555);
    const config = configOf({ path: 'read-only/deeper/app.token' });
    // Root creates files in a 0555 folder all the same: the check runs as nobody then.
    expect(await preflightAsUnprivileged(dir, config)).toBe('cannot write file read-only/deeper/app.token: permission denied (read-only)');
    expect(await readdir(readOnly)).toEqual([]);
  });

  it('refuses a path whose folder is a regular file, naming it', async () => {
    const config = configOf({ path: 'blocked/deeper/app.token' });
    await writeFile(join(dir, 'blocked'), 'a file, not a folder');
    expect(await failure(client.preflight!(config, {}))).toBe(
      `cannot write file blocked/deeper/app.token: a file is in the way of a folder (${shown(join(dir, 'blocked'))})`,
    );
  });

  it('refuses a path through a symbolic link, unless allowSymlinks, and then checks the folder the link leads to', async () => {
    const config = configOf({ path: 'linked/app.token' });
    await mkdir(join(dir, 'real'));
    await symlink(join(dir, 'real'), join(dir, 'linked'));
    expect(await failure(client.preflight!(config, {}))).toBe(
      `cannot write file linked/app.token: ${join(dir, 'linked')} is a symbolic link to ${join(dir, 'real')}; refusing to write through it (set allowSymlinks: true on the sink to follow links)`,
    );
    await expect(client.preflight!({ ...config, allowSymlinks: true }, {})).resolves.toBeUndefined();
    await rm(join(dir, 'real'), { recursive: true });
    await writeFile(join(dir, 'real'), 'a file, not a folder');
    expect(await failure(client.preflight!({ ...config, allowSymlinks: true }, {}))).toMatch(
      /^cannot write file linked\/app.token: a file is in the way of a folder/,
    );
  });

  it('refuses a symbolic link at the file itself', async () => {
    const config = configOf({ path: 'app.token' });
    await writeFile(join(dir, 'elsewhere'), 'precious');
    await symlink(join(dir, 'elsewhere'), join(dir, 'app.token'));
    expect(await failure(client.preflight!(config, {}))).toMatch(
      /^cannot write file app.token: .*app\.token is a symbolic link to .*elsewhere; refusing to write through it/,
    );
  });

  it('refuses a folder where the file should be', async () => {
    const config = configOf({ path: 'app.token' });
    await mkdir(join(dir, 'app.token'));
    expect(await failure(client.preflight!(config, {}))).toBe(
      `cannot write file app.token: a folder is where the file should be (${shown(join(dir, 'app.token'))})`,
    );
  });

  it.skipIf(process.platform === 'win32')('refuses what is not a regular file (a named pipe), which the write refuses', async () => {
    const config = configOf({ path: 'app.token' });
    execFileSync('mkfifo', [join(dir, 'app.token')]);
    expect(await failure(client.preflight!(config, {}))).toBe(
      `cannot write file app.token: ${join(dir, 'app.token')} exists and is not a regular file`,
    );
  });
});

/** A path as the sink's messages show it: relative to the working folder. */
const shown = (path: string) => relative(process.cwd(), path);

/** The project's TypeScript sources, loaded by a child Node: `.js` specifiers lead to the `.ts` files. */
const TS_HOOKS = `import { existsSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { fileURLToPath } from 'node:url';
registerHooks({
  resolve(specifier, context, next) {
    if (specifier.startsWith('.') && specifier.endsWith('.js') && context.parentURL?.endsWith('.ts')) {
      const ts = new URL(specifier.replace(/\\.js$/, '.ts'), context.parentURL);
      if (existsSync(fileURLToPath(ts))) return next(ts.href, context);
    }
    return next(specifier, context);
  },
});
`;

const PREFLIGHT = `const { fileSinkClient } = await import(process.env.FILE_CLIENT);
try {
  await fileSinkClient().preflight(JSON.parse(process.env.SINK_CONFIG), {});
  process.stdout.write(JSON.stringify({ passed: true }));
} catch (error) {
  process.stdout.write(JSON.stringify({ message: error.message }));
}
`;

/**
 * The real client's preflight in a child process without root's privileges: as nobody (65534) when
 * this runs as root, who writes into any folder; else as this user. Its error message, or undefined.
 */
async function preflightAsUnprivileged(dir: string, config: FileSinkConfig): Promise<string | undefined> {
  await writeFile(join(dir, 'hooks.mjs'), TS_HOOKS);
  await writeFile(join(dir, 'preflight.mjs'), PREFLIGHT);
  const root = process.getuid?.() === 0;
  // Nobody must reach the folder under test, as a service account reaches its sink's parent.
  if (root) await chmod(dir, 0o755);
  try {
    const out = await new Promise<string>((done, fail) => {
      execFile(
        process.execPath,
        ['--import', join(dir, 'hooks.mjs'), join(dir, 'preflight.mjs')],
        {
          cwd: dir,
          env: {
            PATH: process.env.PATH ?? '',
            FILE_CLIENT: resolve(import.meta.dirname, '../../src/sinks/file/file-client.ts'),
            SINK_CONFIG: JSON.stringify(config),
          },
          timeout: 20_000,
          ...(root ? { uid: 65534, gid: 65534 } : {}),
        },
        (error, stdout, stderr) => (error ? fail(new Error(`${error.message}\n${stderr}`)) : done(stdout)),
      );
    });
    return (JSON.parse(out) as { message?: string }).message;
  } finally {
    await rm(join(dir, 'hooks.mjs'));
    await rm(join(dir, 'preflight.mjs'));
  }
}

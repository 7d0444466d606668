import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, readFile, rm, symlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { runCli, seedSink, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const root = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
const DAY = 24 * 3600_000;

/**
 * The production shape, built the way the Dockerfile builds it (tsconfig.production.json), into a
 * folder of its own with the package.json beside it, as the image lays them out.
 */
let production: string;

beforeAll(async () => {
  production = await makeTempDir('token-rotator-production-');
  await run(
    process.execPath,
    [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.production.json'), '--outDir', join(production, 'dist')],
    {
      cwd: root,
    },
  ).catch((error: { stdout?: string }) => {
    // tsc writes its output even with type errors (another part's work in progress): judge the output.
    if (!existsSync(join(production, 'dist/cli/main.js'))) throw error;
  });
  await copyFile(join(root, 'package.json'), join(production, 'package.json'));
  await symlink(join(root, 'node_modules'), join(production, 'node_modules'), 'dir');
}, 120_000);

afterAll(async () => {
  await rm(production, { recursive: true, force: true });
});

const dockerfile = () => readFile(join(root, 'Dockerfile'), 'utf8');
const packageJson = async () =>
  JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
    bin: Record<string, string>;
    dependencies: Record<string, string>;
    optionalDependencies?: Record<string, string>;
    files: string[];
  };

describe('the production build', () => {
  it('has neither the emulator, nor the demo, nor the test hooks, nor anything that imports oidc-provider', async () => {
    for (const folder of ['emulator', 'demo', 'testing']) expect(existsSync(join(production, 'dist', folder)), folder).toBe(false);
    expect(existsSync(join(production, 'dist/cli/main.js'))).toBe(true);
    const { stdout } = await run('grep', ['-rl', 'oidc-provider', join(production, 'dist')]).catch(() => ({ stdout: '' }));
    expect(stdout).toBe('');
  });

  it('is what the Dockerfile builds, and the image installs neither dev nor optional dependencies', async () => {
    const text = await dockerfile();
    expect(text).toMatch(/^COPY .*tsconfig\.production\.json/m);
    expect(text).toMatch(/^RUN node node_modules\/typescript\/bin\/tsc -p tsconfig\.production\.json$/m);
    expect(text).toMatch(/^\s*npm ci --omit=dev --omit=optional /m);
    // the only dist/ the image gets is the production build's
    expect(text.match(/^COPY --from=build .*$/gm)).toEqual(['COPY --from=build /app/dist ./dist']);
  });

  it('says the emulator is not part of it, with exit 2', async () => {
    const dir = await makeTempDir();
    const checkout = await runCli(['emulator', '--help'], { cwd: dir });
    expect(checkout.code, 'a development build still has it').toBe(0);
    expect(checkout.stdout).toContain('--seed <file>');
    const shipped = await new Promise<{ code: number; stderr: string }>((done) =>
      execFile(
        process.execPath,
        [join(production, 'dist/cli/main.js'), 'emulator', '--help'],
        { cwd: dir, timeout: 20_000 },
        (error, _out, stderr) => done({ code: typeof error?.code === 'number' ? error.code : 0, stderr }),
      ),
    );
    expect(shipped.code).toBe(2);
    expect(shipped.stderr).toMatch(/emulator: is not part of this installation/);
    await rm(dir, { recursive: true, force: true });
  });
});

describe('the package', () => {
  it('keeps oidc-provider out of the runtime dependencies, and ships the emulator as its own program', async () => {
    const pkg = await packageJson();
    expect(pkg.dependencies['oidc-provider']).toBeUndefined();
    expect(pkg.optionalDependencies?.['oidc-provider']).toBeDefined();
    expect(pkg.bin['token-rotator-emulator']).toBe('dist/emulator/main.js');
    expect(existsSync(join(root, pkg.bin['token-rotator-emulator']!))).toBe(true);
    expect(pkg.files).toContain('!dist/testing');
  });

  it('runs the emulator as token-rotator-emulator', async () => {
    const result = await run(process.execPath, [join(root, 'dist/emulator/main.js'), '--help']);
    expect(result.stdout).toMatch(/^Usage: token-rotator-emulator \[options\]/);
    expect(result.stdout).toContain('--env-out <file>');
  });
});

describe('ROTATOR_TEST_FAILPOINT', () => {
  const fx = useCliFixture();

  async function onceWithFailpoint(cli: string) {
    const token = fx.emulator.store.add({ name: 'ingest', expiresAt: new Date(Date.now() + DAY) });
    await seedSink(fx.dir, 'secrets/ingest.token', token.secret);
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [{ name: 'ingest', id: token.id, sinks: [{ type: 'file', path: 'secrets/ingest.token' }] }],
    });
    return new Promise<{ code: number | null; signal: string | null; stderr: string }>((done) => {
      execFile(
        process.execPath,
        [cli, 'once', '--config', 'rotation.yaml', '--dotenv', fx.envFile],
        { cwd: fx.dir, env: { PATH: process.env.PATH ?? '', ROTATOR_TEST_FAILPOINT: 'staged' }, timeout: 30_000 },
        (error, stdout, stderr) => {
          fx.results.push({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
          done({ code: typeof error?.code === 'number' ? error.code : error ? null : 0, signal: error?.signal ?? null, stderr });
        },
      );
    });
  }

  it('kills a development build at the step it names', async () => {
    expect((await onceWithFailpoint(join(root, 'dist/cli/main.js'))).signal).toBe('SIGKILL');
  });

  it('does nothing in the production build but say it is ignored', async () => {
    const result = await onceWithFailpoint(join(production, 'dist/cli/main.js'));
    expect(result.signal).toBeNull();
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('ROTATOR_TEST_FAILPOINT is ignored');
  });
});

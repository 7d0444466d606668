import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, rm, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';

import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { FAILPOINT_PRELOAD, runCli, seedSink, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { installTarball, packCheckout, type Tarball } from '../helpers/npm-tarball.js';
import { NO_OLD_NODE, oldNodeOnPath, refusalOf } from '../helpers/old-node.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const root = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
const DAY = 24 * 3600_000;

/**
 * The production shape, built the way the Dockerfile builds it (scripts/bundle.mjs --production),
 * into a folder of its own with the package.json beside it, as the image lays them out.
 */
let production: string;

beforeAll(async () => {
  production = await makeTempDir('token-rotator-production-');
  await run(process.execPath, [join(root, 'scripts/bundle.mjs'), '--production', '--outdir', join(production, 'dist')], { cwd: root });
  await copyFile(join(root, 'package.json'), join(production, 'package.json'));
  await symlink(join(root, 'node_modules'), join(production, 'node_modules'), 'dir');
}, 120_000);

afterAll(async () => {
  await rm(production, { recursive: true, force: true });
});

const dockerfile = () => readFile(join(root, 'Dockerfile'), 'utf8');
const packageJson = async () =>
  JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
    private?: boolean;
    version: string;
    license: string;
    keywords?: string[];
    homepage?: string;
    repository?: { type: string; url: string };
    bugs?: { url: string };
    bin: Record<string, string>;
    exports: Record<string, string>;
    dependencies: Record<string, string>;
    optionalDependencies?: Record<string, string>;
    files: string[];
  };

/**
 * The sources, named by the source maps and the bundle's metafile under `dist`, that come from the
 * workspace packages (the emulator, the Kubernetes double, the demo): what the product is built from,
 * read from the build itself rather than from a list of file names.
 */
async function packagedSources(dist: string): Promise<string[]> {
  const { stdout } = await run('find', [dist, '-type', 'f', '(', '-name', '*.map', '-o', '-name', 'bundle-meta.json', ')']);
  const found: string[] = [];
  for (const file of stdout.split('\n').filter(Boolean)) {
    const json = JSON.parse(await readFile(file, 'utf8')) as { sources?: string[]; inputs?: Record<string, unknown> };
    const sources = [...(json.sources ?? []), ...Object.keys(json.inputs ?? {})];
    found.push(...sources.filter((source) => /(^|\/)(packages\/|node_modules\/token-rotator-)/.test(source)));
  }
  return found;
}

/** sha256 of the Apache License 2.0 as the ASF publishes it (LICENSE-2.0.txt), unchanged. */
const APACHE_2_0_SHA256 = 'cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30';

describe('the production build', () => {
  it('has nothing of the emulator, the Kubernetes double or the demo, nor anything that imports oidc-provider', async () => {
    expect(existsSync(join(production, 'dist/cli/main.js'))).toBe(true);
    expect(await packagedSources(join(production, 'dist'))).toEqual([]);
    const { stdout } = await run('grep', ['-rl', 'oidc-provider', join(production, 'dist')]).catch(() => ({ stdout: '' }));
    expect(stdout).toBe('');
  });

  it("is what the Dockerfile builds, and the image installs the product's own lock, without dev dependencies", async () => {
    const text = await dockerfile();
    expect(text).toMatch(/^COPY scripts\/bundle\.mjs /m);
    expect(text).toMatch(/^RUN node scripts\/bundle\.mjs --production$/m);
    expect(text).toMatch(/^\s*npm ci --omit=dev --ignore-scripts /m);
    // Each stage cuts the manifest and lock down to the product's closure before npm ci, and the
    // workspace packages are not even in the build context.
    expect(text).toMatch(/^RUN node scripts\/image\/product-manifest\.mjs --omit-dev$/m);
    expect(text.match(/^RUN node scripts\/image\/product-manifest\.mjs$/gm)).toHaveLength(1);
    expect((await readFile(join(root, '.dockerignore'), 'utf8')).split('\n')).toContain('packages');
    // the only dist/ the image gets is the production build's
    expect(text.match(/^COPY --from=build .*$/gm)).toEqual(['COPY --from=build /app/dist ./dist']);
  });

  it('has the bundle alone (the CLI, its chunks, their maps and the metafile), its version fixed at build time', async () => {
    const { stdout } = await run('find', [join(production, 'dist'), '-type', 'f']);
    const files = stdout
      .split('\n')
      .filter(Boolean)
      .map((file) => file.slice(join(production, 'dist').length + 1));
    expect(files).toContain('cli/main.js');
    expect(files.filter((file) => !/^(cli\/main\.js|chunks\/[\w-]+\.js|bundle-meta\.json)(\.map|\.LEGAL\.txt)?$/.test(file))).toEqual([]);
    // Its version was fixed at build time: the bundle does not read package.json.
    await rm(join(production, 'package.json'));
    const version = await run(process.execPath, [join(production, 'dist/cli/main.js'), '--version'], { cwd: production });
    await copyFile(join(root, 'package.json'), join(production, 'package.json'));
    expect(version.stdout).toBe(`${(await packageJson()).version}\n`);
  });

  it('starts from the compile cache the image bakes in, which it reads without writing', async () => {
    // As the Dockerfile fills it: the CLI, then every chunk, with NODE_COMPILE_CACHE set.
    const cache = join(production, 'compile-cache');
    const env = { PATH: process.env.PATH ?? '', NODE_COMPILE_CACHE: cache };
    await run(process.execPath, [join(production, 'dist/cli/main.js'), '--version'], { cwd: production, env });
    await run(process.execPath, [join(root, 'scripts/image/warm-compile-cache.mjs'), join(production, 'dist')], { cwd: production, env });
    const text = await dockerfile();
    const finalStage = text.slice(text.lastIndexOf('\nFROM '));
    expect(finalStage.indexOf('USER 1000:1000'), 'filled as the user it runs as: Node keys the cache on the uid').toBeLessThan(
      finalStage.indexOf('warm-compile-cache.mjs'),
    );
    expect(finalStage).toMatch(/^ENV NODE_COMPILE_CACHE=\/app\/compile-cache$/m);
    // Node says (NODE_DEBUG_NATIVE) whether it took each module's code from the cache.
    const validated = await run(
      process.execPath,
      [join(production, 'dist/cli/main.js'), 'validate', '--config', join(root, 'config/rotation.yaml')],
      {
        cwd: production,
        env: {
          ...env,
          NODE_DEBUG_NATIVE: 'COMPILE_CACHE',
          ROTATOR_API_URL: 'http://127.0.0.1:9',
          ROTATOR_ACCESS_TOKEN: 'canary-not-a-real-token',
        },
      },
    );
    const verdicts = [...validated.stderr.matchAll(/V8 code cache for ESM file:\/\/\S+\/dist\/(\S+) was (\w+( \w+)?)/g)].map(
      ([, file, verdict]) => `${file} ${verdict}`,
    );
    expect(
      verdicts.some((line) => /^chunks\/validate-\w+\.js accepted$/.test(line)),
      verdicts.join('\n'),
    ).toBe(true);
    expect(verdicts.filter((line) => !line.endsWith(' accepted'))).toEqual([]);
    expect(validated.stderr).not.toMatch(/writing cache for/);
  });

  it('says, as the checkout’s build does, that the emulator is its own program, with exit 2', async () => {
    const dir = await makeTempDir();
    const checkout = await runCli(['emulator', '--help'], { cwd: dir });
    expect(checkout.code).toBe(2);
    expect(checkout.stderr).toContain('emulator: is its own program: npx token-rotator-emulator');
    const shipped = await new Promise<{ code: number; stderr: string }>((done) =>
      execFile(
        process.execPath,
        [join(production, 'dist/cli/main.js'), 'emulator', '--help'],
        { cwd: dir, timeout: 20_000 },
        (error, _out, stderr) => done({ code: typeof error?.code === 'number' ? error.code : 0, stderr }),
      ),
    );
    expect(shipped.code).toBe(2);
    expect(shipped.stderr).toBe(checkout.stderr);
    await rm(dir, { recursive: true, force: true });
  });
});

describe('the package', () => {
  it('depends on neither oidc-provider nor the emulator in any way, and has one program', async () => {
    const pkg = (await packageJson()) as unknown as Record<string, unknown>;
    for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies', 'devDependencies', 'bundleDependencies']) {
      const names = Object.keys((pkg[field] as Record<string, string> | undefined) ?? {});
      expect(
        names.filter((name) => name === 'oidc-provider' || name.startsWith('token-rotator-')),
        field,
      ).toEqual([]);
    }
    expect(Object.keys(pkg.bin as Record<string, string>)).toEqual(['token-rotator']);
  });
});

describe('the npm tarball', () => {
  let work: string;
  let tarball: Tarball;
  let paths: Set<string>;
  let installed: string;

  beforeAll(async () => {
    work = await makeTempDir('token-rotator-tarball-');
    tarball = await packCheckout(root, work);
    paths = new Set(tarball.files.map((f) => f.path));
    installed = join(work, 'project');
    await mkdir(installed);
    await installTarball(root, tarball.file, installed);
  }, 180_000);

  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it('is publishable under the Apache-2.0 licence, with where it comes from', async () => {
    const pkg = await packageJson();
    expect(pkg.private).toBeUndefined();
    expect(pkg.license).toBe('Apache-2.0');
    const licence = await readFile(join(root, 'LICENSE'));
    expect(createHash('sha256').update(licence).digest('hex'), 'LICENSE is the Apache License 2.0 text, unchanged').toBe(APACHE_2_0_SHA256);
    expect(pkg.repository?.url).toMatch(/^git\+https:\/\/.+\.git$/);
    const home = pkg.repository!.url.replace(/^git\+/, '').replace(/\.git$/, '');
    expect(pkg.homepage).toBe(`${home}#readme`);
    expect(pkg.bugs?.url).toBe(`${home}/issues`);
    expect(pkg.keywords?.length).toBeGreaterThan(0);
  });

  it('ships the licence, the docs, both programs and both JSON Schemas', async () => {
    const pkg = await packageJson();
    for (const file of ['LICENSE', 'README.md', 'CHANGELOG.md', 'package.json', 'dist/policy.schema.json', 'schema/output.schema.json'])
      expect(paths, file).toContain(file);
    for (const bin of Object.values(pkg.bin)) expect(paths, bin).toContain(bin);
    for (const target of Object.values(pkg.exports)) expect(paths, target).toContain(target.replace(/^\.\//, ''));
  });

  it('ships no source, tests, bench or scripts', () => {
    expect([...paths].filter((path) => /^(src|test|bench|scripts|packages)\//.test(path))).toEqual([]);
  });

  it('ships nothing of the emulator, the Kubernetes double or the demo, and nothing that names oidc-provider', async () => {
    const shipped = join(installed, 'node_modules/token-rotator');
    expect(await packagedSources(join(shipped, 'dist'))).toEqual([]);
    const { stdout } = await run('grep', ['-rl', 'oidc-provider', shipped]).catch(() => ({ stdout: '' }));
    expect(stdout).toBe('');
  });

  it('ships a source map beside each file of the bundle, carrying the source it maps', async () => {
    const shipped = [...paths];
    expect(paths).toContain('dist/cli/main.js.map');
    for (const path of shipped.filter((p) => p.endsWith('.js'))) {
      const url = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(await readFile(join(root, path), 'utf8'))?.[1];
      if (url !== undefined) expect(paths, `${path} names its map`).toContain(join(dirname(path), url));
    }
    for (const path of shipped.filter((p) => p.endsWith('.map'))) {
      const map = JSON.parse(await readFile(join(root, path), 'utf8')) as { sources: string[]; sourcesContent?: (string | null)[] };
      expect(map.sourcesContent?.length, path).toBe(map.sources.length);
      expect(
        map.sourcesContent?.filter((content) => typeof content !== 'string'),
        path,
      ).toEqual([]);
    }
  });

  it('installs from the tarball and its production dependencies alone, and token-rotator runs', async () => {
    const bin = join(installed, 'node_modules/.bin');
    // Nothing only a workspace package needs came along: the install is the product's own closure.
    for (const absent of ['oidc-provider', 'token-rotator-emulator', 'token-rotator-kubernetes-double']) {
      expect(existsSync(join(installed, 'node_modules', absent)), absent).toBe(false);
    }
    const env = { PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` };
    const version = await run(join(bin, 'token-rotator'), ['--version'], { cwd: installed, env });
    expect(version.stdout).toBe(`${tarball.version}\n`);
    // A command that loads the policy schema, the YAML reader and the settings, on the shipped example.
    const validated = await run(
      join(bin, 'token-rotator'),
      ['validate', '--json', '--config', 'node_modules/token-rotator/config/rotation.yaml'],
      { cwd: installed, env: { ...env, ROTATOR_API_URL: 'http://127.0.0.1:9', ROTATOR_ACCESS_TOKEN: 'canary-not-a-real-token' } },
    );
    // ...whose output the schema the package exports describes, found as a user's code finds it.
    const schemaFile = createRequire(join(installed, 'package.json')).resolve('token-rotator/output.schema.json');
    const validate = new Ajv2020({ allErrors: true, strict: true }).compile(JSON.parse(await readFile(schemaFile, 'utf8')) as object);
    const envelope = JSON.parse(validated.stdout) as { kind: string };
    expect(validate(envelope), JSON.stringify(validate.errors)).toBe(true);
    expect(envelope.kind).toBe('Validation');
  });

  it('installed, token-rotator says which Node it needs when the first node on PATH is too old', async (ctx) => {
    const old = oldNodeOnPath();
    ctx.skip(!old, NO_OLD_NODE);
    // As on a machine with only that Node: the bins' `#!/usr/bin/env node` finds it first.
    const env = { PATH: `${dirname(old!.path)}:${process.env.PATH ?? ''}` };
    for (const program of ['token-rotator']) {
      const result = await run(join(installed, 'node_modules/.bin', program), ['--version'], { cwd: installed, env }).then(
        () => ({ code: 0, stderr: '' }),
        (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
      );
      expect(result, program).toEqual({ code: 2, stderr: refusalOf(program, old!) });
    }
  });
});

describe('ROTATOR_TEST_FAILPOINT', () => {
  const fx = useCliFixture();

  async function onceWithFailpoint(cli: string, preload: string[] = []) {
    const token = fx.emulator.store.add({ name: 'ingest', expiresAt: new Date(Date.now() + DAY) });
    await seedSink(fx.dir, 'secrets/ingest.token', token.secret);
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [{ name: 'ingest', id: token.id, sinks: [{ type: 'file', path: 'secrets/ingest.token' }] }],
    });
    return new Promise<{ code: number | null; signal: string | null; stderr: string }>((done) => {
      execFile(
        process.execPath,
        [...preload, cli, 'once', '--config', 'rotation.yaml', '--dotenv', fx.envFile],
        { cwd: fx.dir, env: { PATH: process.env.PATH ?? '', ROTATOR_TEST_FAILPOINT: 'staged' }, timeout: 30_000 },
        (error, stdout, stderr) => {
          fx.results.push({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
          done({ code: typeof error?.code === 'number' ? error.code : error ? null : 0, signal: error?.signal ?? null, stderr });
        },
      );
    });
  }

  it('kills the CLI at the step it names when the test preload is loaded', async () => {
    expect((await onceWithFailpoint(join(root, 'dist/cli/main.js'), ['--import', FAILPOINT_PRELOAD])).signal).toBe('SIGKILL');
  });

  it('does nothing without the test preload (the production build) but say it is ignored', async () => {
    const result = await onceWithFailpoint(join(production, 'dist/cli/main.js'));
    expect(result.signal).toBeNull();
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('ROTATOR_TEST_FAILPOINT is ignored');
  });
});

import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { type Lock, productLock } from '../../scripts/lib/product-lock.mjs';

const run = promisify(execFile);

/**
 * npm with none of the `npm_config_*` settings of the npm that started the tests (`npm test` and
 * `npm exec` pass theirs on, `npm_config_prefix` and `npm_config_global_prefix` among them) but its
 * cache, the one `npm ci` filled: PATH, HOME, and `npm_config_cache` when it is set.
 */
export function npmEnv(): NodeJS.ProcessEnv {
  const cache = process.env.npm_config_cache;
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...(cache ? { npm_config_cache: cache } : {}) };
}

export interface PackedFile {
  path: string;
  size: number;
  mode: number;
}

export interface Tarball {
  file: string;
  version: string;
  files: PackedFile[];
}

/**
 * `npm pack` of a checkout as it is built now: `--ignore-scripts` leaves out `prepack` (which
 * empties dist/) and `prepare` (which builds it again), so the tests judge the dist/ they run.
 */
export async function packCheckout(root: string, into: string): Promise<Tarball> {
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', into], {
    cwd: root,
    env: npmEnv(),
    maxBuffer: 16 * 1024 * 1024,
  });
  const [packed] = JSON.parse(stdout) as { filename: string; version: string; files: PackedFile[] }[];
  return { file: join(into, packed!.filename), version: packed!.version, files: packed!.files };
}

/** What a lock entry of an installed tarball copies from its package.json. */
export interface Manifest {
  name: string;
  version: string;
  license?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  bin?: string | Record<string, string>;
  engines?: Record<string, string>;
}

/**
 * Installs a packed tarball into `folder` as a user's project would have it, without the network:
 * `npm ci --offline` from npm's cache, with a lock file that pins the tarball's dependencies to the
 * product's production part of the checkout's package-lock.json, at the same places: the closure of
 * its dependencies, as the image build takes it (scripts/lib/product-lock.mjs). Not the entries
 * without `dev`: npm counts the workspace packages' dependencies as production ones, and they would
 * be installed with it. `npm install <tarball> --offline` cannot do it: it needs the registry's
 * package documents, which `npm ci` never caches. Install scripts do not run (the dependencies' are
 * not under test).
 */
export async function installTarball(root: string, tarball: string, folder: string): Promise<void> {
  const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as Manifest;
  await installTarballs(root, [{ manifest: pkg, file: tarball }], folder);
}

/**
 * Installs several packed tarballs together, as installTarball installs one: the lock pins what
 * they depend on outside themselves to the closure the checkout's lock gives a root depending on
 * it (the workspace lock hoists every package's dependencies; none is nested under packages/).
 */
export async function installTarballs(root: string, packed: { manifest: Manifest; file: string }[], folder: string): Promise<void> {
  const own = new Set(packed.map(({ manifest }) => manifest.name));
  const external = Object.fromEntries(
    packed.flatMap(({ manifest }) =>
      Object.entries({ ...manifest.dependencies, ...manifest.optionalDependencies }).filter(([name]) => !own.has(name)),
    ),
  );
  const lock = JSON.parse(await readFile(join(root, 'package-lock.json'), 'utf8')) as Lock;
  const closure = productLock({ name: 'installs-token-rotator', dependencies: external }, lock, { omitDev: true });
  const dependencies = Object.fromEntries(packed.map(({ manifest, file }) => [manifest.name, `file:${file}`]));
  const project = { name: 'installs-token-rotator', version: '1.0.0', private: true, dependencies };
  const packages: Record<string, unknown> = { '': { name: project.name, version: project.version, dependencies } };
  for (const { manifest, file } of packed) {
    packages[`node_modules/${manifest.name}`] = {
      version: manifest.version,
      resolved: `file:${file}`,
      integrity: `sha512-${createHash('sha512')
        .update(await readFile(file))
        .digest('base64')}`,
      license: manifest.license,
      dependencies: manifest.dependencies,
      optionalDependencies: manifest.optionalDependencies,
      bin: manifest.bin,
      engines: manifest.engines,
    };
  }
  for (const [path, entry] of Object.entries(closure.lock.packages ?? {})) if (path !== '') packages[path] = entry;
  await writeFile(join(folder, 'package.json'), JSON.stringify(project, null, 2));
  await writeFile(
    join(folder, 'package-lock.json'),
    JSON.stringify({ name: project.name, lockfileVersion: 3, requires: true, packages }, null, 2),
  );
  await run('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], {
    cwd: folder,
    env: npmEnv(),
    maxBuffer: 16 * 1024 * 1024,
  });
}

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
  const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as Record<string, unknown> & { name: string };
  const production = productLock(pkg, JSON.parse(await readFile(join(root, 'package-lock.json'), 'utf8')) as Lock, { omitDev: true });
  const spec = `file:${tarball}`;
  const project = { name: 'installs-token-rotator', version: '1.0.0', private: true, dependencies: { [pkg.name]: spec } };
  const packages: Record<string, unknown> = {
    '': { name: project.name, version: project.version, dependencies: project.dependencies },
    [`node_modules/${pkg.name}`]: {
      version: pkg.version,
      resolved: spec,
      integrity: `sha512-${createHash('sha512')
        .update(await readFile(tarball))
        .digest('base64')}`,
      license: pkg.license,
      dependencies: pkg.dependencies,
      optionalDependencies: pkg.optionalDependencies,
      bin: pkg.bin,
      engines: pkg.engines,
    },
  };
  for (const [path, entry] of Object.entries(production.lock.packages ?? {})) if (path !== '') packages[path] = entry;
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

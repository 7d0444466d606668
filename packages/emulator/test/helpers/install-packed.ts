import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { type Lock, productLock } from '../../../../scripts/lib/product-lock.mjs';
import { npmEnv } from '../../../../test/helpers/npm-tarball.js';

const run = promisify(execFile);

interface Manifest {
  name: string;
  version: string;
  license?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  bin?: Record<string, string>;
  engines?: Record<string, string>;
}

interface Packed {
  name: string;
  filename: string;
}

/**
 * `npm pack` of the product (the checkout's root) and of the two published packages, as the README's
 * "Try it by hand" makes them, from the dist/ built now (`--ignore-scripts`: no prepack rebuild).
 */
export async function packAll(root: string, into: string): Promise<Map<string, string>> {
  const options = { cwd: root, env: npmEnv(), maxBuffer: 16 * 1024 * 1024 };
  const pack = ['pack', '--ignore-scripts', '--json', '--pack-destination', into];
  const outputs = await Promise.all([
    run('npm', pack, options),
    run('npm', [...pack, '-w', 'token-rotator-kubernetes-double', '-w', 'token-rotator-emulator'], options),
  ]);
  const packed = outputs.flatMap(({ stdout }) => JSON.parse(stdout) as Packed[]);
  return new Map(packed.map((p) => [p.name, join(into, p.filename)]));
}

/**
 * Installs the packed tarballs into `folder` as a user's project would have them, without the
 * network: `npm ci --offline` from the cache `npm ci` filled, with a lock that pins the tarballs'
 * dependencies to the checkout's package-lock.json, as test/helpers/npm-tarball.ts does for the
 * product alone. The closure is the product's lock cut for a root that depends on what the three
 * packages depend on (the workspace lock hoists them all; none is nested under packages/).
 */
export async function installPacked(root: string, tarballs: Map<string, string>, folder: string): Promise<void> {
  const manifests = await Promise.all(
    [...tarballs.keys()].map(async (name) => {
      const path = name === 'token-rotator' ? 'package.json' : `packages/${name.replace(/^token-rotator-/, '')}/package.json`;
      return JSON.parse(await readFile(join(root, path), 'utf8')) as Manifest;
    }),
  );
  const own = new Set(tarballs.keys());
  const external = Object.fromEntries(
    manifests.flatMap((m) => Object.entries({ ...m.dependencies, ...m.optionalDependencies }).filter(([name]) => !own.has(name))),
  );
  const lock = JSON.parse(await readFile(join(root, 'package-lock.json'), 'utf8')) as Lock;
  const closure = productLock({ name: 'installs-token-rotator', dependencies: external }, lock, { omitDev: true });

  const dependencies = Object.fromEntries([...tarballs].map(([name, file]) => [name, `file:${file}`]));
  const project = { name: 'installs-token-rotator', version: '1.0.0', private: true, dependencies };
  const packages: Record<string, unknown> = { '': { name: project.name, version: project.version, dependencies } };
  for (const m of manifests) {
    const file = tarballs.get(m.name)!;
    packages[`node_modules/${m.name}`] = {
      version: m.version,
      resolved: `file:${file}`,
      integrity: `sha512-${createHash('sha512')
        .update(await readFile(file))
        .digest('base64')}`,
      license: m.license,
      dependencies: m.dependencies,
      optionalDependencies: m.optionalDependencies,
      bin: m.bin,
      engines: m.engines,
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

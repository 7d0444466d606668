import { execFile } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

import { describe, expect, it } from 'vitest';

import { type Lock, type LockEntry, type Manifest, productLock } from '../../scripts/lib/product-lock.mjs';
import { npmEnv } from '../helpers/npm-tarball.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const root = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

/** A lockfileVersion 3 lock of `packages`, whose root entry is the manifest's dependency fields. */
function lockOf(manifest: Manifest, packages: Record<string, LockEntry>): Lock {
  const { name, version, workspaces, dependencies, devDependencies, optionalDependencies } = manifest;
  const rootEntry = Object.fromEntries(
    Object.entries({ name, version, workspaces, dependencies, devDependencies, optionalDependencies }).filter(([, v]) => v !== undefined),
  );
  return { name, version, lockfileVersion: 3, requires: true, packages: { '': rootEntry, ...packages } };
}

const pkg = (version: string, more: Partial<LockEntry> = {}): LockEntry => ({ version, license: 'MIT', ...more });
const paths = (lock: Lock) => Object.keys(lock.packages!).filter((path) => path !== '');

/** The shape of the repository after the split: the product at the root, two workspace packages. */
const WORKSPACE_MANIFEST: Manifest = {
  name: 'token-rotator',
  version: '1.0.0',
  workspaces: ['packages/kubernetes-double', 'packages/emulator'],
  dependencies: { jose: '^6.0.0', yaml: '^2.0.0' },
  devDependencies: { vitest: '^4.0.0', 'token-rotator-emulator': '*' },
};
const WORKSPACE_LOCK = lockOf(WORKSPACE_MANIFEST, {
  'node_modules/jose': pkg('6.1.0'),
  'node_modules/yaml': pkg('2.9.0'),
  'node_modules/vitest': pkg('4.1.0', { dev: true, dependencies: { tinyrainbow: '^3' } }),
  'node_modules/tinyrainbow': pkg('3.0.0', { dev: true }),
  // npm's flags count the workspaces as production: oidc-provider carries no `dev`.
  'node_modules/oidc-provider': pkg('9.13.0', { dependencies: { koa: '^3' } }),
  'node_modules/koa': pkg('3.0.0'),
  'node_modules/token-rotator-emulator': { resolved: 'packages/emulator', link: true },
  'node_modules/token-rotator-kubernetes-double': { resolved: 'packages/kubernetes-double', link: true },
  'packages/emulator': pkg('1.0.0', { name: 'token-rotator-emulator', dependencies: { 'oidc-provider': '^9', jose: '^6' } }),
  'packages/emulator/node_modules/jose': pkg('5.0.0'),
  'packages/kubernetes-double': pkg('1.0.0', { name: 'token-rotator-kubernetes-double', dependencies: { yaml: '^2' } }),
});

describe('productLock on hand-written locks', () => {
  it('keeps the production closure, without the workspaces, their links or what only they need', () => {
    const manifest = { ...WORKSPACE_MANIFEST, devDependencies: { vitest: '^4.0.0' } };
    const { manifest: product, lock } = productLock(manifest, lockOf(manifest, WORKSPACE_LOCK.packages!), { omitDev: true });
    expect(paths(lock)).toEqual(['node_modules/jose', 'node_modules/yaml']);
    expect(product).toEqual({ name: 'token-rotator', version: '1.0.0', dependencies: { jose: '^6.0.0', yaml: '^2.0.0' } });
    expect(lock.packages!['']).toEqual({ name: 'token-rotator', version: '1.0.0', dependencies: { jose: '^6.0.0', yaml: '^2.0.0' } });
    expect(lock.lockfileVersion).toBe(3);
  });

  it('keeps the dev closure, flagged dev, unless told to omit it', () => {
    const manifest = { ...WORKSPACE_MANIFEST, devDependencies: { vitest: '^4.0.0' } };
    const { manifest: product, lock } = productLock(manifest, lockOf(manifest, WORKSPACE_LOCK.packages!));
    expect(paths(lock)).toEqual(['node_modules/jose', 'node_modules/yaml', 'node_modules/vitest', 'node_modules/tinyrainbow']);
    expect(product.devDependencies).toEqual({ vitest: '^4.0.0' });
    expect(product).not.toHaveProperty('workspaces');
    expect(lock.packages!['node_modules/tinyrainbow']!.dev).toBe(true);
  });

  it('refuses a product whose closure reaches a workspace package, naming it', () => {
    expect(() => productLock(WORKSPACE_MANIFEST, WORKSPACE_LOCK)).toThrow(
      /reach node_modules\/token-rotator-emulator, a link to the workspace package packages\/emulator \(from the root\)/,
    );
    const deep = lockOf(
      { name: 'p', dependencies: { a: '1' } },
      { 'node_modules/a': pkg('1.0.0', { dependencies: { w: '1' } }), 'node_modules/w': { resolved: 'packages/w', link: true } },
    );
    expect(() => productLock({ name: 'p', dependencies: { a: '1' } }, deep)).toThrow(/reach node_modules\/w, .* \(from node_modules\/a\)/);
  });

  it('resolves as Node does: the nearest node_modules up the path, so a nested version shadows the top one', () => {
    const manifest = { name: 'p', dependencies: { a: '1', b: '1' } };
    const { lock } = productLock(
      manifest,
      lockOf(manifest, {
        'node_modules/a': pkg('1.0.0', { dependencies: { c: '2' } }),
        'node_modules/a/node_modules/c': pkg('2.0.0', { dependencies: { d: '1' } }),
        'node_modules/b': pkg('1.0.0', { dependencies: { '@s/e': '1' } }),
        'node_modules/@s/e': pkg('1.0.0', { dependencies: { c: '1' } }),
        'node_modules/c': pkg('1.0.0'),
        'node_modules/d': pkg('1.0.0'),
        'node_modules/b/node_modules/d': pkg('9.0.0'),
        'node_modules/unused': pkg('1.0.0'),
      }),
    );
    expect(paths(lock)).toEqual([
      'node_modules/a',
      'node_modules/a/node_modules/c',
      'node_modules/b',
      'node_modules/@s/e',
      'node_modules/c',
      'node_modules/d',
    ]);
  });

  it("computes npm's flags for the product's graph, not the workspace's", () => {
    const manifest = { name: 'p', dependencies: { prod: '1' }, optionalDependencies: { opt: '1' }, devDependencies: { tool: '1' } };
    const { lock } = productLock(
      manifest,
      lockOf(manifest, {
        // The workspace's lock said prod was dev: the product's own graph says otherwise.
        'node_modules/prod': pkg('1.0.0', { dev: true, peerDependencies: { host: '1' }, dependencies: { both: '1' } }),
        'node_modules/host': pkg('1.0.0', { peer: true }),
        'node_modules/both': pkg('1.0.0'),
        'node_modules/opt': pkg('1.0.0', { dependencies: { shared: '1' } }),
        'node_modules/tool': pkg('1.0.0', { dependencies: { shared: '1', both: '1' } }),
        'node_modules/shared': pkg('1.0.0'),
      }),
    );
    const flags = (path: string) => {
      const { dev, optional, devOptional, peer } = lock.packages![path]!;
      return Object.fromEntries(Object.entries({ dev, optional, devOptional, peer }).filter(([, v]) => v !== undefined));
    };
    expect(flags('node_modules/prod')).toEqual({});
    expect(flags('node_modules/both')).toEqual({});
    expect(flags('node_modules/host')).toEqual({ peer: true });
    expect(flags('node_modules/opt')).toEqual({ optional: true });
    expect(flags('node_modules/tool')).toEqual({ dev: true });
    expect(flags('node_modules/shared')).toEqual({ devOptional: true });
  });

  it('passes over a missing optional dependency (another platform, an optional peer) but not a missing required one', () => {
    const entries = { 'node_modules/a': pkg('1.0.0', { peerDependencies: { q: '1' }, peerDependenciesMeta: { q: { optional: true } } }) };
    const manifest = { name: 'p', dependencies: { a: '1' }, optionalDependencies: { 'fsevents-like': '1' } };
    expect(paths(productLock(manifest, lockOf(manifest, entries)).lock)).toEqual(['node_modules/a']);
    const broken = { name: 'p', dependencies: { a: '1', gone: '1' } };
    expect(() => productLock(broken, lockOf(broken, entries))).toThrow(
      /package-lock\.json has no gone for the root, which needs it \(prod\)/,
    );
  });

  it('refuses a lock that is not lockfileVersion 3, and changes neither document it is given', () => {
    expect(() => productLock({ name: 'p' }, { lockfileVersion: 1, dependencies: {} })).toThrow(/lockfileVersion 3/);
    const manifest = structuredClone(WORKSPACE_MANIFEST);
    const lock = structuredClone(WORKSPACE_LOCK);
    productLock({ ...manifest, devDependencies: {} }, lock, { omitDev: true });
    expect(lock).toEqual(WORKSPACE_LOCK);
    expect(manifest).toEqual(WORKSPACE_MANIFEST);
  });
});

describe("productLock on the repository's own lock", () => {
  const readJson = async (file: string) => JSON.parse(await readFile(join(root, file), 'utf8')) as Manifest & Lock;

  /** What npm itself makes of the lock for this manifest: `npm install --package-lock-only` writes its own. */
  async function npmVerdict(manifest: Manifest, lock: Lock): Promise<Lock> {
    const dir = await makeTempDir('token-rotator-product-lock-');
    try {
      await writeFile(join(dir, 'package.json'), JSON.stringify(manifest));
      await writeFile(join(dir, 'package-lock.json'), JSON.stringify(lock));
      // --offline: a package missing from the lock cannot be fetched, so npm fails on it.
      await run('npm', ['install', '--package-lock-only', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], {
        cwd: dir,
        env: npmEnv(),
      });
      return JSON.parse(await readFile(join(dir, 'package-lock.json'), 'utf8')) as Lock;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  for (const omitDev of [true, false])
    it(`is a lock npm keeps as it is, with${omitDev ? 'out' : ''} the dev dependencies, and holds no workspace package`, async () => {
      const product = productLock(await readJson('package.json'), await readJson('package-lock.json'), { omitDev });
      expect(product.manifest).not.toHaveProperty('workspaces');
      const outside = paths(product.lock).filter((path) => !path.startsWith('node_modules/') || product.lock.packages![path]!.link);
      expect(outside).toEqual([]);
      expect(paths(product.lock)).toContain('node_modules/pino');
      expect(await npmVerdict(product.manifest, product.lock)).toEqual(product.lock);
    }, 60_000);

  it("keeps nothing the lock marks dev; without workspaces, exactly the rest (npm's production set)", async () => {
    const lock = await readJson('package-lock.json');
    const { lock: production } = productLock(await readJson('package.json'), lock, { omitDev: true });
    const notDev = paths(lock).filter(
      (path) => !lock.packages![path]!.dev && !lock.packages![path]!.link && path.startsWith('node_modules/'),
    );
    expect(paths(production).filter((path) => !notDev.includes(path))).toEqual([]);
    if (lock.packages!['']!.workspaces === undefined) expect(paths(production)).toEqual(notDev);
    else expect(paths(production)).not.toContain('node_modules/oidc-provider');
  });
});

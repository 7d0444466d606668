import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { makeTempDir } from '../helpers/temp-dir.js';

const root = join(import.meta.dirname, '../..');
const run = promisify(execFile);

/** A node_modules laid out as the real ones that the image's pruning meets are. */
const FIXTURE: Record<string, string> = {
  // The Azure SDK's layout: browser and React Native builds reached only through those conditions.
  '@azure/core-x/package.json': JSON.stringify({
    main: './dist/commonjs/index.js',
    exports: {
      '.': {
        browser: './dist/browser/index.js',
        'react-native': { types: './dist/react-native/index.d.ts', default: './dist/react-native/index.js' },
        import: { types: './dist/esm/index.d.ts', default: './dist/esm/index.js' },
        require: './dist/commonjs/index.js',
      },
    },
  }),
  '@azure/core-x/dist/browser/index.js': '',
  '@azure/core-x/dist/react-native/index.js': '',
  '@azure/core-x/dist/esm/index.js': '',
  '@azure/core-x/dist/esm/index.d.ts': '',
  '@azure/core-x/dist/esm/index.js.map': '',
  '@azure/core-x/dist/commonjs/index.js': '',
  '@azure/core-x/README.md': '',
  '@azure/core-x/LICENSE.md': '',
  '@azure/core-x/LICENSE': '',
  // MSAL for browsers: removed whole.
  '@azure/msal-browser/package.json': '{}',
  '@azure/msal-browser/lib/index.js': '',
  // long: the UMD build is what `require` loads.
  'long/package.json': JSON.stringify({ exports: { '.': { import: './index.js', require: './umd/index.js' } } }),
  'long/umd/index.js': '',
  // google-auth-library: a folder named browser that Node code requires, no exports naming it.
  'google-auth-library/package.json': JSON.stringify({ main: './build/src/index.js' }),
  'google-auth-library/build/src/crypto/browser/crypto.js': '',
  // yaml: the browser build is the "default" condition, and dist/doc is code.
  'yaml/package.json': JSON.stringify({ exports: { '.': { node: './dist/index.js', default: './browser/index.js' } } }),
  'yaml/browser/index.js': '',
  'yaml/dist/doc/Document.js': '',
  // pino: tests, docs, a benchmark and CI settings at the package's root.
  'pino/package.json': '{}',
  'pino/pino.js': '',
  'pino/test/basic.test.js': '',
  'pino/docs/api.md': '',
  'pino/benchmarks/basic.bench.js': '',
  'pino/.github/workflows/ci.yml': '',
  'pino/lib/__tests__/x.js': '',
  // a nested copy, pruned the same way
  'pino-pretty/package.json': '{}',
  'pino-pretty/node_modules/sonic-boom/package.json': '{}',
  'pino-pretty/node_modules/sonic-boom/index.js': '',
  'pino-pretty/node_modules/sonic-boom/test/x.test.js': '',
  'pino-pretty/node_modules/sonic-boom/types/index.d.ts': '',
};

let nodeModules: string;

beforeAll(async () => {
  nodeModules = join(await makeTempDir('token-rotator-prune-'), 'node_modules');
  for (const [path, text] of Object.entries(FIXTURE)) {
    await mkdir(dirname(join(nodeModules, path)), { recursive: true });
    await writeFile(join(nodeModules, path), text);
  }
  // The script runs node (browser-only-dirs.mjs): this one.
  await run('sh', [join(root, 'scripts/image/prune-node-modules.sh'), nodeModules], {
    env: { PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` },
  });
});

afterAll(async () => {
  await rm(dirname(nodeModules), { recursive: true, force: true });
});

const kept = (path: string) => existsSync(join(nodeModules, path));

describe('pruning the image node_modules', () => {
  it('removes browser and React Native builds that only those conditions reach, and MSAL for browsers', () => {
    expect(kept('@azure/core-x/dist/browser')).toBe(false);
    expect(kept('@azure/core-x/dist/react-native')).toBe(false);
    expect(kept('@azure/msal-browser')).toBe(false);
    expect(kept('@azure/core-x/dist/esm/index.js')).toBe(true);
    expect(kept('@azure/core-x/dist/commonjs/index.js')).toBe(true);
  });

  it('keeps a folder named browser or umd that Node can load', () => {
    expect(kept('long/umd/index.js')).toBe(true);
    expect(kept('google-auth-library/build/src/crypto/browser/crypto.js')).toBe(true);
    expect(kept('yaml/browser/index.js')).toBe(true);
  });

  it('removes maps, type declarations and docs, and keeps licence texts', () => {
    expect(kept('@azure/core-x/dist/esm/index.d.ts')).toBe(false);
    expect(kept('@azure/core-x/dist/esm/index.js.map')).toBe(false);
    expect(kept('@azure/core-x/README.md')).toBe(false);
    expect(kept('@azure/core-x/LICENSE.md')).toBe(true);
    expect(kept('@azure/core-x/LICENSE')).toBe(true);
  });

  it("removes a package's tests, docs, benchmarks and CI settings at its root, nested copies too, and no code folder", () => {
    for (const path of [
      'pino/test',
      'pino/docs',
      'pino/benchmarks',
      'pino/.github',
      'pino/lib/__tests__',
      'pino-pretty/node_modules/sonic-boom/test',
    ]) {
      expect(kept(path), path).toBe(false);
    }
    expect(kept('pino-pretty/node_modules/sonic-boom/types')).toBe(false); // left empty, then removed
    expect(kept('pino/pino.js')).toBe(true);
    expect(kept('pino-pretty/node_modules/sonic-boom/index.js')).toBe(true);
    expect(kept('yaml/dist/doc/Document.js')).toBe(true);
  });
});

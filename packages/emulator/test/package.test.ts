import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

import { beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../../..');

interface Packed {
  name: string;
  files: { path: string }[];
}

/** What `npm pack -w` would put in the two published packages, from the dist/ built now. */
let packed: Map<string, string[]>;
beforeAll(async () => {
  const { stdout } = await run(
    'npm',
    ['pack', '--dry-run', '--json', '--ignore-scripts', '-w', 'token-rotator-kubernetes-double', '-w', 'token-rotator-emulator'],
    { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }, maxBuffer: 16 * 1024 * 1024 },
  );
  packed = new Map((JSON.parse(stdout) as Packed[]).map((p) => [p.name, p.files.map((f) => f.path)]));
}, 120_000);

describe('the published token-rotator-emulator', () => {
  it('ships its program and its types, built, and no sources or tests', async () => {
    const pkg = JSON.parse(await readFile(resolve(import.meta.dirname, '../package.json'), 'utf8')) as { bin: Record<string, string> };
    const files = packed.get('token-rotator-emulator')!;
    expect(files).toContain(pkg.bin['token-rotator-emulator']);
    expect(files).toContain('dist/index.d.ts');
    expect(files.filter((path) => !['package.json', 'README.md', 'LICENSE'].includes(path) && !path.startsWith('dist/'))).toEqual([]);
  });

  it('depends on the Kubernetes double as a package of its own, which ships its programs and types alone', async () => {
    const pkg = JSON.parse(await readFile(resolve(import.meta.dirname, '../package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(Object.keys(pkg.dependencies)).toContain('token-rotator-kubernetes-double');
    const files = packed.get('token-rotator-kubernetes-double')!;
    for (const entry of ['dist/index.js', 'dist/index.d.ts', 'dist/name-rules.js', 'dist/self-signed-certificate.js']) {
      expect(files).toContain(entry);
    }
    expect(files.filter((path) => !['package.json', 'README.md', 'LICENSE'].includes(path) && !path.startsWith('dist/'))).toEqual([]);
  });

  it.each([
    ['token-rotator-emulator', 'emulator'],
    ['token-rotator-kubernetes-double', 'kubernetes-double'],
  ])("%s ships the Apache License text it is published under, the repository's LICENSE", async (name, folder) => {
    expect(packed.get(name)).toContain('LICENSE');
    const [shipped, root] = await Promise.all([readFile(resolve(ROOT, 'packages', folder, 'LICENSE')), readFile(resolve(ROOT, 'LICENSE'))]);
    expect(shipped.equals(root), `packages/${folder}/LICENSE is the repository's LICENSE`).toBe(true);
  });
});

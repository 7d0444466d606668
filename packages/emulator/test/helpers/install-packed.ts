import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { installTarballs, type Manifest, npmEnv } from '../../../../test/helpers/npm-tarball.js';

const run = promisify(execFile);

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
 * network (test/helpers/npm-tarball.ts `installTarballs`).
 */
export async function installPacked(root: string, tarballs: Map<string, string>, folder: string): Promise<void> {
  const packed = await Promise.all(
    [...tarballs].map(async ([name, file]) => {
      const path = name === 'token-rotator' ? 'package.json' : `packages/${name.replace(/^token-rotator-/, '')}/package.json`;
      return { manifest: JSON.parse(await readFile(join(root, path), 'utf8')) as Manifest, file };
    }),
  );
  await installTarballs(root, packed, folder);
}

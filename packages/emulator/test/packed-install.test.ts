import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { installPacked, packAll } from './helpers/install-packed.js';

const ROOT = resolve(import.meta.dirname, '../../..');

/** The README's "Try it by hand": three .tgz files from the checkout, installed in a folder of one's own. */
let dir: string;
let bin: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'token-rotator-packed-'));
  const packed = join(dir, 'packed');
  const project = join(dir, 'try-token-rotator');
  await Promise.all([mkdir(packed), mkdir(project)]);
  const tarballs = await packAll(ROOT, packed);
  expect([...tarballs.keys()].sort()).toEqual(['token-rotator', 'token-rotator-emulator', 'token-rotator-kubernetes-double']);
  await installPacked(ROOT, tarballs, project);
  bin = join(project, 'node_modules/.bin');
}, 300_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** A program of the installed packages, with the Node that runs the tests first on PATH (the bins' `#!/usr/bin/env node`). */
function installed(program: string, args: string[]): Promise<Result> {
  const PATH = [resolve(process.execPath, '..'), process.env.PATH ?? ''].join(':');
  return new Promise((done) =>
    execFile(join(bin, program), args, { cwd: dir, env: { PATH }, timeout: 60_000 }, (error, stdout, stderr) =>
      done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    ),
  );
}

describe('the three packages, packed and installed offline as a user would', () => {
  it('token-rotator-emulator runs', async () => {
    const result = await installed('token-rotator-emulator', ['--help']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Usage: token-rotator-emulator \[options\]/);
  });

  // --help loads no more than the options; checking a namespace loads the program and the double's name rules.
  it('token-rotator-emulator loads its program and the Kubernetes double installed beside it', async () => {
    const result = await installed('token-rotator-emulator', ['--kubernetes', join(dir, 'kubeconfig'), '--namespaces', 'Apps']);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain("--namespaces: 'Apps' is not a namespace name");
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });

  it('token-rotator runs and says its version', async () => {
    const { version } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const result = await installed('token-rotator', ['--version']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toContain(version);
  });
});

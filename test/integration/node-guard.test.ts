import { execFile } from 'node:child_process';
import { resolve } from 'node:path';

import { describe, expect, it } from 'vitest';

import { NO_OLD_NODE, oldNodeOnPath, refusalOf } from '../helpers/old-node.js';

const root = resolve(import.meta.dirname, '../..');
const old = oldNodeOnPath();

function runOn(node: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) =>
    execFile(node, args, { cwd: root, env: { PATH: process.env.PATH ?? '' }, timeout: 30_000 }, (error, stdout, stderr) =>
      done({ code: typeof error?.code === 'number' ? error.code : error ? -1 : 0, stdout, stderr }),
    ),
  );
}

describe('on a Node.js older than 22.12 (the system Node of this machine)', () => {
  it('`node dist/cli/main.js --version` says which Node it needs, in one line, exit 2', async (ctx) => {
    ctx.skip(!old, NO_OLD_NODE);
    expect(await runOn(old!.path, ['dist/cli/main.js', '--version'])).toEqual({
      code: 2,
      stdout: '',
      stderr: refusalOf('token-rotator', old!),
    });
  });

  it.for([
    ['token-rotator', 'dist/cli/main.js', ['once', '--config', 'rotation.yaml']],
    ['token-rotator', 'dist/cli/main.js', ['daemon', '--help']],
    ['token-rotator-emulator', 'packages/emulator/dist/main.js', ['--help']],
  ] as const)('%s (%s %s) says the same, whatever it was asked', async ([program, bin, args], ctx) => {
    ctx.skip(!old, NO_OLD_NODE);
    expect(await runOn(old!.path, [bin, ...args])).toEqual({ code: 2, stdout: '', stderr: refusalOf(program, old!) });
  });
});

describe('on a supported Node.js (the one running the tests)', () => {
  it('both programs run', async () => {
    const version = await runOn(process.execPath, ['dist/cli/main.js', '--version']);
    expect(version).toMatchObject({ code: 0, stderr: '' });
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    const emulator = await runOn(process.execPath, ['packages/emulator/dist/main.js', '--help']);
    expect(emulator.code).toBe(0);
    expect(emulator.stdout).toMatch(/^Usage: token-rotator-emulator/);
  });
});

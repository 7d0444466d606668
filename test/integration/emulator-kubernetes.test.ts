import { execFile } from 'node:child_process';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { expect, it } from 'vitest';

import { runCli, startEmulatorCli, writePolicy } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const run = promisify(execFile);

it('token-rotator-emulator --kubernetes serves an API double that token-rotator and kubectl both use through the kubeconfig it writes', async () => {
  const dir = await makeTempDir();
  await writeFile(join(dir, 'seed.yaml'), 'tokens:\n  - { id: tok-ingest, name: ingest, expiresIn: 2d }\n');
  const emulator = startEmulatorCli(['--seed', 'seed.yaml', '--env-out', 'emulator.env', '--kubernetes', 'kubeconfig'], { cwd: dir });
  try {
    await expect.poll(() => readFile(join(dir, 'emulator.env'), 'utf8').catch(() => ''), { timeout: 20_000 }).toContain('KUBECONFIG=');
    expect((await stat(join(dir, 'kubeconfig'))).mode & 0o777).toBe(0o600);
    const kubectl = (...args: string[]) => run('kubectl', ['--kubeconfig', join(dir, 'kubeconfig'), ...args]);
    expect((await kubectl('get', 'namespaces', '-o', 'name')).stdout.split('\n').filter(Boolean).sort()).toEqual([
      'namespace/apps',
      'namespace/default',
      'namespace/token-rotator',
    ]);

    await writePolicy(dir, {
      version: 1,
      tokens: [{ name: 'ingest', id: 'tok-ingest', sinks: [{ type: 'kubernetes-secret', name: 'ingest-token', namespace: 'apps' }] }],
    });
    const once = await runCli(['once', '--config', 'rotation.yaml', '--dotenv', 'emulator.env'], {
      cwd: dir,
      env: { HOME: dir, ROTATOR_STATE_BACKEND: 'kubernetes', ROTATOR_STATE_KEY: Buffer.alloc(32, 1).toString('base64') },
    });
    expect(once.code, once.stderr).toBe(0);
    const { stdout } = await kubectl(
      'get',
      'secret',
      'ingest-token',
      '-n',
      'apps',
      '-o',
      'jsonpath={.metadata.annotations.token-rotator\\.io/token-name}',
    );
    expect(stdout).toBe('ingest');
    const { stdout: state } = await kubectl('get', 'secrets', '-n', 'token-rotator', '-l', 'token-rotator.io/role=state', '-o', 'name');
    expect(state.trim()).toMatch(/^secret\/token-rotator-state-ingest-[0-9a-f]{10}$/);
  } finally {
    emulator.child.kill('SIGTERM');
    const stopped = await emulator.done;
    expect(stopped.stdout).toContain('Kubernetes API double on https://127.0.0.1:');
    expect(stopped.stdout).not.toContain('token:');
    await rm(dir, { recursive: true, force: true });
  }
});

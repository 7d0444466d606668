import { stat } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type CliResult, runCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { type KubernetesHere, kubernetesHere, seedDeployment } from '../helpers/kubernetes.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const inDays = (d: number) => new Date(Date.now() + d * 86400_000);
let k: KubernetesHere;

beforeAll(async () => {
  k = await kubernetesHere(await makeTempDir());
  seedDeployment(k.double, 'apps', 'checked-app');
});
afterAll(() => k.double.close());

describe('validate --online: checks against the real systems, changing nothing', () => {
  const fx = useCliFixture({ env: () => ({ ...k.env, HOOK_URL: 'http://127.0.0.1:9/hook' }) });

  async function validate(...args: string[]): Promise<CliResult> {
    const result = await runCli(['validate', '--online', ...args, '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir });
    fx.results.push(result);
    return result;
  }

  it('passes for a working setup, and writes, rotates and restarts nothing', async () => {
    const token = fx.emulator.store.add({ name: 'ok', expiresAt: inDays(2) });
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [
        {
          name: 'ok',
          id: token.id,
          sinks: [
            { type: 'file', path: 'secrets/ok.token' },
            { type: 'kubernetes-secret', name: 'checked-token', namespace: 'apps' },
          ],
          reload: [
            { type: 'rollout', name: 'checked-app', namespace: 'apps' },
            { type: 'webhook', urlFrom: 'HOOK_URL' },
          ],
        },
      ],
    });
    const before = k.double.requests.length;
    const result = await validate('--json');
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).items).toEqual([
      { check: 'state', target: expect.stringMatching(/^file /), result: 'ok', note: '0 unfinished rotation(s)' },
      { check: 'service', target: `ok (${token.id})`, result: 'ok', note: expect.stringMatching(/^expires /) },
      { check: 'sink', target: 'file secrets/ok.token', result: 'ok' },
      { check: 'sink', target: 'kubernetes-secret apps/checked-token[token]', result: 'ok' },
      { check: 'reload', target: 'rollout Deployment apps/checked-app', result: 'ok' },
      { check: 'reload', target: 'webhook HOOK_URL', result: 'not checked', note: 'calling it would be a reload' },
    ]);
    // Dry runs only: no Secret made, no restart, no file, no regenerate.
    const writes = k.double.requests.slice(before).filter((r) => r.method !== 'GET');
    expect(writes.length).toBeGreaterThan(0);
    expect(writes.every((r) => r.query.dryRun === 'All')).toBe(true);
    expect(k.double.objects.get('secrets', 'apps', 'checked-token')).toBeUndefined();
    await expect(stat(join(fx.dir, 'secrets'))).rejects.toThrow(/ENOENT/);
    expect(fx.emulator.requests.filter((r) => r.op === 'regenerate')).toHaveLength(0);
  });

  it('fails (exit 1) naming each problem: an unknown token, a Secret that cannot be written, a missing workload', async () => {
    k.double.objects.put({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'someone-elses', namespace: 'apps' },
      type: 'Opaque',
      stringData: { token: 'x' },
    });
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [
        {
          name: 'gone',
          id: 'no-such-token',
          sinks: [{ type: 'kubernetes-secret', name: 'someone-elses', namespace: 'apps' }],
          reload: [{ type: 'rollout', name: 'no-such-app', namespace: 'apps' }],
        },
      ],
    });
    const result = await validate();
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/service\s+gone\s+failed\s+.*404/);
    expect(result.stdout).toMatch(
      /sink\s+kubernetes-secret apps\/someone-elses\[token\]\s+failed\s+.*not managed by token-rotator.*adopt: true/,
    );
    expect(result.stdout).toMatch(/reload\s+rollout Deployment apps\/no-such-app\s+failed\s+Deployment apps\/no-such-app does not exist/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});

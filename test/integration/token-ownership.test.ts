import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { type CliResult, runCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { secretData, useKubernetesDouble } from '../helpers/kubernetes.js';
import { itemsOf } from '../helpers/output-items.js';

const DAY = 24 * 3600_000;
const inDays = (d: number) => new Date(Date.now() + d * DAY);

const k = useKubernetesDouble();

/**
 * Two teams, two policies, two states, one Secret by mistake: the red team's finding 2. Whose a
 * destination is goes by the token name its metadata carries, not only "managed by token-rotator".
 */
describe('ownership is per token name', () => {
  const fx = useCliFixture({ env: () => k.env });
  const team = (name: string) => join(fx.dir, name);
  async function cli(name: string, ...args: string[]): Promise<CliResult> {
    const result = await runCli([...args, '--config', 'rotation.yaml', '--dotenv', fx.envFile], {
      cwd: team(name),
      env: { ROTATOR_STATE_DIR: join(team(name), 'state') },
    });
    fx.results.push(result);
    return result;
  }
  const regenerated = (id: string) => fx.emulator.requests.filter((r) => r.op === 'regenerate' && r.id === id).length;
  async function policyOf(name: string, id: string, sink: Record<string, unknown> = {}) {
    await mkdir(team(name), { recursive: true });
    await writePolicy(team(name), {
      version: 1,
      tokens: [{ name, id, sinks: [{ type: 'kubernetes-secret', name: 'shared-token', namespace: 'apps', ...sink }] }],
    });
  }

  it("a Secret written for alpha is not beta's: no recovery of alpha's id, no rotation of either token, until beta adopts it", async () => {
    const alpha = fx.emulator.store.add({ name: 'alpha', expiresAt: inDays(60) });
    const beta = fx.emulator.store.add({ name: 'beta', expiresAt: inDays(60) });
    await policyOf('alpha', alpha.id);
    await policyOf('beta', beta.id);
    expect((await cli('alpha', 'once')).code).toBe(0);
    const alphaSecret = secretData(k.double, 'apps', 'shared-token', 'token');
    const alphaId = (await cli('alpha', 'status', '--json')).stdout.match(/"id":\s*"([^"]+)"/)![1]!;

    // Beta has no state: the Secret's metadata names alpha, so it neither recovers alpha's id nor adopts its secret.
    const first = await cli('beta', 'once', '--json');
    expect(first.code).toBe(1);
    expect(JSON.stringify(itemsOf(first.stdout))).toMatch(/names another token, \\"alpha\\"/);
    const forced = await cli('beta', 'rotate', 'beta', '--reason', 'test', '--json');
    expect(forced.code).toBe(1);
    expect(forced.stdout + forced.stderr).toMatch(/names another token/);
    expect(regenerated(alphaId)).toBe(0);
    expect(regenerated(beta.id), 'refused before regenerating').toBe(0);
    expect(secretData(k.double, 'apps', 'shared-token', 'token')).toBe(alphaSecret);

    // Alpha goes on as before.
    const again = await cli('alpha', 'once');
    expect(again.code, again.stderr).toBe(0);
    expect(regenerated(alphaId)).toBe(0);

    // Told to adopt, beta takes the Secret over with its own token (alpha's secret is not beta's).
    await policyOf('beta', beta.id, { adopt: true });
    const adopted = await cli('beta', 'once', '--json');
    expect(adopted.code, adopted.stderr).toBe(0);
    expect(regenerated(beta.id)).toBe(1);
    expect(regenerated(alphaId)).toBe(0);
    expect(secretData(k.double, 'apps', 'shared-token', 'token')).not.toBe(alphaSecret);
    // Now alpha is the one refused, and says so, without regenerating.
    const refused = await cli('alpha', 'once', '--json');
    expect(refused.code).toBe(1);
    expect(JSON.stringify(itemsOf(refused.stdout))).toMatch(/names another token, \\"beta\\"/);
    expect(regenerated(alphaId)).toBe(0);
  });

  it("a json file written for alpha is not beta's either: refused, never adopted as beta's secret, as files cannot be taken over", async () => {
    const alpha = fx.emulator.store.add({ name: 'alpha', expiresAt: inDays(60) });
    const beta = fx.emulator.store.add({ name: 'beta', expiresAt: inDays(60) });
    const shared = join(fx.dir, 'shared.json');
    for (const [name, id, own] of [
      ['alpha', alpha.id, []],
      ['beta', beta.id, [{ type: 'file', path: 'beta-other.token' }]],
    ] as const) {
      await mkdir(team(name), { recursive: true });
      await writePolicy(team(name), {
        version: 1,
        tokens: [{ name, id, sinks: [{ type: 'file', path: shared, format: 'json' }, ...own] }],
      });
    }
    expect((await cli('alpha', 'once')).code).toBe(0);
    const written = await readFile(shared, 'utf8');
    const regenerates = () => fx.emulator.requests.filter((r) => r.op === 'regenerate').length;
    const before = regenerates();
    const refused = await cli('beta', 'once', '--json');
    expect(refused.code).toBe(1);
    expect(JSON.stringify(itemsOf(refused.stdout))).toMatch(/names another token, \\"alpha\\".*cannot be taken over/);
    expect(await readFile(shared, 'utf8')).toBe(written);
    await expect(readFile(join(team('beta'), 'beta-other.token'), 'utf8'), "alpha's secret is not beta's to deliver").rejects.toThrow();
    expect(regenerates()).toBe(before);
  });
});

import { writeFile } from 'node:fs/promises';

import type { RecordedKubeRequest } from 'token-rotator-kubernetes-double';
import { afterEach, describe, expect, it } from 'vitest';

import { type CliResult, runCli, startCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { secretData, useKubernetesDouble } from '../helpers/kubernetes.js';
import { itemsOf } from '../helpers/output-items.js';

const DAY = 24 * 3600_000;
const inDays = (d: number) => new Date(Date.now() + d * DAY);
const SECRETS = '/api/v1/namespaces/apps/secrets';
const MANAGED = 'app.kubernetes.io/managed-by=token-rotator';

const k = useKubernetesDouble();

/**
 * The performance issue's request floor for Kubernetes Secret sinks: what a check reads scales with
 * namespaces, not tokens. One LIST by our label answers every labelled Secret of a namespace; a
 * Secret that is not in it (missing, or another tool's) is read by name, as before.
 */
describe('reading kubernetes-secret sinks: one list per namespace, not a get per Secret', () => {
  const fx = useCliFixture({ env: () => ({ ...k.env }) });
  let prefix = 0;
  afterEach(() => {
    k.double.forbidden.length = 0;
  });

  async function cli(...args: string[]): Promise<CliResult> {
    const result = await runCli([...args, '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir });
    fx.results.push(result);
    return result;
  }
  /** `count` tokens, each with its own Secret in apps; `extra` sinks appended to the last. */
  async function tokens(count: number) {
    const tag = `reads-${++prefix}`;
    const made = Array.from({ length: count }, (_, i) => fx.emulator.store.add({ name: `${tag}-${i}`, expiresAt: inDays(60) }));
    await writePolicy(fx.dir, {
      version: 1,
      tokens: made.map((t) => ({ name: t.name, id: t.id, sinks: [{ type: 'kubernetes-secret', name: t.name, namespace: 'apps' }] })),
    });
    return made;
  }
  const since = (index: number) => k.double.requests.slice(index);
  const lists = (requests: RecordedKubeRequest[]) => requests.filter((r) => r.verb === 'list' && r.path === SECRETS);
  const gets = (requests: RecordedKubeRequest[]) => requests.filter((r) => r.verb === 'get' && r.path.startsWith(`${SECRETS}/`));

  it('once and plan over five tokens in one namespace: exactly one LIST by our label, no GET of a Secret', async () => {
    const made = await tokens(5);
    // The first run finds every Secret missing and writes them (a write reads by name before it applies).
    const first = await cli('once', '--json');
    expect(first.code, first.stderr).toBe(0);
    expect(made.every((t) => secretData(k.double, 'apps', t.name, 'token') !== undefined)).toBe(true);

    for (const command of ['once', 'plan']) {
      const before = k.double.requests.length;
      const result = await cli(command, '--json');
      expect(result.code, result.stderr).toBe(0);
      const items = itemsOf(result.stdout) as Array<{ action: string; drift?: unknown[] }>;
      expect(items.map((o) => o.action)).toEqual(made.map(() => 'skip'));
      // Every Secret read, none unreadable (plan, too, reaches the cluster through the --dotenv kubeconfig).
      expect(items.flatMap((o) => o.drift ?? [])).toEqual([]);
      const listed = lists(since(before));
      expect(listed.length, `${command}: LIST requests of ${SECRETS}`).toBe(1);
      expect(listed[0]).toMatchObject({ status: 200, query: { labelSelector: MANAGED } });
      expect(gets(since(before)).map((r) => r.path)).toEqual([]);
    }
  });

  it("still reads another tool's Secret by name, and still refuses it", async () => {
    const made = await tokens(3);
    expect((await cli('once')).code).toBe(0);
    const foreign = fx.emulator.store.add({ name: `reads-${++prefix}-foreign`, expiresAt: inDays(60) });
    k.double.objects.put({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: foreign.name, namespace: 'apps' },
      type: 'Opaque',
      stringData: { token: 'someone-elses' },
    });
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [...made, foreign].map((t) => ({
        name: t.name,
        id: t.id,
        sinks: [{ type: 'kubernetes-secret', name: t.name, namespace: 'apps' }],
      })),
    });

    const before = k.double.requests.length;
    const result = await cli('once', '--json');
    expect(result.code).toBe(1);
    const outcomes = itemsOf(result.stdout) as Array<{ name: string; action: string; drift?: Array<{ kind: string }> }>;
    expect(outcomes.find((o) => o.name === foreign.name)).toMatchObject({ action: 'skip', drift: [{ kind: 'unowned' }] });
    expect(outcomes.filter((o) => o.name !== foreign.name).map((o) => o.action)).toEqual(['skip', 'skip', 'skip']);
    expect(secretData(k.double, 'apps', foreign.name, 'token')).toBe('someone-elses');
    expect(lists(since(before))).toHaveLength(1);
    expect(gets(since(before)).map((r) => r.path)).toEqual([`${SECRETS}/${foreign.name}`]);

    // plan finds the same, and exits as once did: no run can repair another tool's Secret.
    const plan = await cli('plan', '--json');
    expect(plan.code).toBe(1);
    expect(itemsOf(plan.stdout).find((i) => i.name === foreign.name)).toMatchObject({ action: 'skip', drift: [{ kind: 'unowned' }] });
  });

  it('without permission to list, reads each Secret by name for the rest of the run, says once what list would save, and succeeds', async () => {
    // Two lanes for five tokens: reads come in waves, and no later wave tries the LIST again.
    await writeFile(fx.envFile, 'ROTATOR_CONCURRENCY=2\n', { flag: 'a' });
    const made = await tokens(5);
    k.double.forbidden.push({ verb: 'list', resource: 'secrets', namespace: 'apps' });
    const first = await cli('once', '--json');
    expect(first.code, first.stderr).toBe(0);

    const before = k.double.requests.length;
    const result = await cli('once', '--json');
    expect(result.code, result.stderr).toBe(0);
    expect((itemsOf(result.stdout) as Array<{ action: string }>).map((o) => o.action)).toEqual(made.map(() => 'skip'));
    expect(lists(since(before)).map((r) => r.status)).toEqual([403]);
    expect(
      gets(since(before))
        .map((r) => r.path)
        .sort(),
    ).toEqual(made.map((t) => `${SECRETS}/${t.name}`).sort());
    const said = result.stderr.split('\n').filter((line) => line.includes('granting list'));
    expect(said, result.stderr).toHaveLength(1);
    expect(JSON.parse(said[0]!)).toMatchObject({ level: 'info', namespace: 'apps' });
    expect(said[0]).toMatch(/granting list on secrets in apps saves a request per Secret/);
  });

  it('the daemon finds a Secret deleted between two checks missing at the next check, however soon it comes', async () => {
    const [token] = await tokens(1);
    await writePolicy(fx.dir, {
      version: 1,
      defaults: { schedule: '* * * * * *' },
      tokens: [{ name: token!.name, id: token!.id, sinks: [{ type: 'kubernetes-secret', name: token!.name, namespace: 'apps' }] }],
    });
    const path = `${SECRETS}/${token!.name}`;
    const daemon = startCli(['daemon', '--listen', '127.0.0.1:0', '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir });
    let stderr = '';
    daemon.child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
    try {
      // The first check finds the Secret missing and writes it.
      await expect
        .poll(() => k.double.requests.findIndex((r) => r.verb === 'patch' && r.path === path && r.status < 300 && !r.query.dryRun), {
          timeout: 20_000,
        })
        .toBeGreaterThanOrEqual(0);
      // A check after it has just read the namespace; the Secret goes right after that read.
      // Not the preflight's dry run: the write itself.
      const written = k.double.requests.findIndex((r) => r.verb === 'patch' && r.path === path && !r.query.dryRun);
      await expect
        .poll(() => since(written).some((r) => (r.verb === 'list' && r.path === SECRETS) || (r.verb === 'get' && r.path === path)), {
          timeout: 10_000,
          interval: 20,
        })
        .toBe(true);
      const deletedAt = Date.now();
      k.double.objects.delete('secrets', 'apps', token!.name);
      await expect.poll(() => secretData(k.double, 'apps', token!.name, 'token'), { timeout: 20_000 }).toBeDefined();

      // Checks (one retrieve each) after the deletion, up to the one that wrote it again (the same
      // secret, no new token): the check under way when it happened may have read before it, the
      // next one must see it. A listing kept for seconds would let checks every second go on seeing
      // the deleted Secret.
      await expect.poll(() => /"msg":"redelivered"/.test(stderr), { timeout: 20_000 }).toBe(true);
      const redelivered = (stderr.split('\n').filter((line) => line.includes('"msg":"redelivered"')) as string[])
        .map((line) => Date.parse((JSON.parse(line) as { time: string }).time))
        .find((at) => at > deletedAt)!;
      const checks = fx.emulator.requests.filter(
        (r) => r.op === 'retrieve' && Date.parse(r.at) > deletedAt && Date.parse(r.at) < redelivered,
      );
      expect(checks.length).toBeGreaterThanOrEqual(1);
      expect(checks.length).toBeLessThanOrEqual(2);
    } finally {
      daemon.child.kill('SIGTERM');
      fx.results.push(await daemon.done);
    }
  });
});

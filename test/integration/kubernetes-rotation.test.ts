import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

import { emulatorSecrets, runCli, startCli, writePolicy } from '../helpers/cli.js';
import { restartedAt, secretData, seedDeployment, useKubernetesDouble, useKubernetesStateCli } from '../helpers/kubernetes.js';
import { expectNoLeak } from '../helpers/leaks.js';
import { itemsOf } from '../helpers/output-items.js';

const DAY = 24 * 3600_000;
const inDays = (d: number) => new Date(Date.now() + d * DAY);
const run = promisify(execFile);

const k = useKubernetesDouble();

/** The CronJob overlay as `kubectl kustomize` renders it: its container's plain settings and its policy. */
async function cronjobOverlay(): Promise<{ env: Record<string, string>; policy: string }> {
  const { stdout } = await run('kubectl', ['kustomize', resolve(import.meta.dirname, '../../config/kubernetes/overlays/cronjob')]);
  interface Rendered {
    kind: string;
    metadata: { name: string };
    data?: Record<string, string>;
    spec?: { jobTemplate: { spec: { template: { spec: { containers: Array<{ env: Array<{ name: string; value?: string }> }> } } } } };
  }
  const objects = parseAllDocuments(stdout).map((d) => d.toJS() as Rendered);
  const container = objects.find((o) => o.kind === 'CronJob')!.spec!.jobTemplate.spec.template.spec.containers[0]!;
  const env = Object.fromEntries(container.env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
  const policy = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('token-rotator-policy'))!.data!['rotation.yaml']!;
  return { env, policy };
}

describe('on Kubernetes, against the API double, as a new user would', () => {
  const fx = useKubernetesStateCli(k, 'rotator');

  const cli = fx.cli;
  async function whoami(secret: string | undefined) {
    const response = await fetch(`${fx.emulator.apiUrl}/_emulator/whoami`, { headers: { authorization: `Bearer ${secret}` } });
    return response.ok ? ((await response.json()) as { id: string; name: string }) : undefined;
  }
  const kubectl = (...args: string[]) => run('kubectl', ['--kubeconfig', k.kubeconfig, ...args]);
  /** The state Secrets of the names (not the journal index beside them). */
  const stateSecrets = () =>
    k.double.objects
      .list('secrets', fx.stateNamespace)
      .filter((s) => (s.metadata as { labels?: Record<string, string> }).labels?.['token-rotator.io/role'] === 'state');
  const writes = (since: number, path: string) => k.double.requests.slice(since).filter((r) => r.method !== 'GET' && r.path.includes(path));
  /** No secret the token service issued sits in a state Secret: staged secrets are sealed, and erased at commit. */
  function expectStateWithoutSecrets() {
    const stored = k.double.objects.list('secrets', fx.stateNamespace).map((s) =>
      Object.values((s.data ?? {}) as Record<string, string>)
        .map((v) => Buffer.from(v, 'base64').toString('utf8'))
        .join('\n'),
    );
    expectNoLeak({ state: stored.join('\n') }, emulatorSecrets(fx.emulator));
  }

  it("once with the cronjob overlay's settings creates the Secret and restarts the Deployment; a second run changes nothing; a deleted Secret is healed", async () => {
    const overlay = await cronjobOverlay();
    expect(overlay.env).toMatchObject({ ROTATOR_STATE_BACKEND: 'kubernetes' });
    const token = fx.emulator.store.add({ name: 'ingest-api', expiresAt: inDays(60) });
    await writeFile(join(fx.dir, 'rotation.yaml'), overlay.policy.replace(/id: replace-me/, `id: ${JSON.stringify(token.id)}`));
    const settings = Object.entries(overlay.env).filter(([name]) => name === 'ROTATOR_STATE_BACKEND');
    await writeFile(fx.envFile, `${settings.map(([n, v]) => `${n}=${v}`).join('\n')}\n`, { flag: 'a' });
    seedDeployment(k.double, 'apps', 'ingest-api');

    // First run: the new Secret is drift (a sink new in the policy), so the token is rotated to fill it.
    const first = await cli('once', '--json');
    expect(first.code, first.stderr).toBe(0);
    const [outcome] = itemsOf(first.stdout) as Array<{ action: string; newId: string; reloads: unknown[] }>;
    expect(outcome).toMatchObject({ action: 'rotate', reloads: [{ target: 'Deployment apps/ingest-api', result: 'restarted' }] });
    const delivered = secretData(k.double, 'apps', 'ingest-api-token', 'token');
    expect(await whoami(delivered)).toMatchObject({ id: outcome!.newId, name: 'ingest-api' });
    // kubectl reads what the rotator wrote.
    const { stdout: viaKubectl } = await kubectl('get', 'secret', 'ingest-api-token', '-n', 'apps', '-o', 'jsonpath={.data.token}');
    expect(Buffer.from(viaKubectl, 'base64').toString('utf8')).toBe(delivered);
    const { stdout: labels } = await kubectl('get', 'secret', 'ingest-api-token', '-n', 'apps', '-o', 'jsonpath={.metadata.labels}');
    expect(JSON.parse(labels)).toEqual({ 'app.kubernetes.io/managed-by': 'token-rotator', 'app.kubernetes.io/part-of': 'ingest-api' });
    const firstRestart = restartedAt(k.double, 'apps', 'ingest-api');
    expect(firstRestart).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    // The state is in the cluster: one labelled Secret, the Lease released.
    const state = stateSecrets();
    expect(state.map((s) => (s.metadata as { labels: Record<string, string> }).labels)).toEqual([
      { 'app.kubernetes.io/managed-by': 'token-rotator', 'token-rotator.io/role': 'state' },
    ]);
    expect(JSON.parse(Buffer.from((state[0]!.data as { record: string }).record, 'base64').toString('utf8'))).toMatchObject({
      name: 'ingest-api',
      currentId: outcome!.newId,
    });
    const [lease] = k.double.objects.list('leases', fx.stateNamespace) as Array<{ spec: { holderIdentity?: string } }>;
    expect(lease!.spec.holderIdentity ?? '').toBe('');
    expectStateWithoutSecrets();

    // Second run: nothing is due, nothing is written, nothing restarts.
    const before = k.double.requests.length;
    const regenerates = fx.emulator.requests.filter((r) => r.op === 'regenerate').length;
    const second = await cli('once', '--json');
    expect(second.code, second.stderr).toBe(0);
    expect(itemsOf(second.stdout)[0]).toMatchObject({ action: 'skip' });
    expect(writes(before, '/namespaces/apps/')).toEqual([]);
    expect(fx.emulator.requests.filter((r) => r.op === 'regenerate')).toHaveLength(regenerates);
    expect(restartedAt(k.double, 'apps', 'ingest-api')).toBe(firstRestart);

    // Someone deletes the Secret: the next run notices, writes the same secret again (no new token)
    // and restarts the app, whose pods may have failed to start without it.
    await kubectl('delete', 'secret', 'ingest-api-token', '-n', 'apps');
    const restartsBefore = writes(0, '/deployments/ingest-api').length;
    const third = await cli('once', '--json');
    expect(third.code, third.stderr).toBe(0);
    const [healed] = itemsOf(third.stdout) as Array<{ action: string; reason: string; newId: string }>;
    expect(healed).toMatchObject({
      action: 'redeliver',
      reason: expect.stringMatching(/kubernetes-secret apps\/ingest-api-token\[token\] is missing/),
    });
    expect(secretData(k.double, 'apps', 'ingest-api-token', 'token')).toBe(delivered);
    expect(fx.emulator.requests.filter((r) => r.op === 'regenerate')).toHaveLength(regenerates);
    expect(writes(0, '/deployments/ingest-api').length).toBe(restartsBefore + 1);
    expectStateWithoutSecrets();

    // Deleted and re-created by hand with the same value: repaired (labels back), nothing restarts.
    await kubectl('delete', 'secret', 'ingest-api-token', '-n', 'apps');
    await kubectl('create', 'secret', 'generic', 'ingest-api-token', '-n', 'apps', `--from-literal=token=${delivered}`);
    const restartsAfter = writes(0, '/deployments/ingest-api').length;
    const fourth = await cli('once', '--json');
    expect(fx.emulator.requests.filter((r) => r.op === 'regenerate')).toHaveLength(regenerates);
    expect(secretData(k.double, 'apps', 'ingest-api-token', 'token')).toBe(delivered);
    expect(writes(0, '/deployments/ingest-api').length).toBe(restartsAfter);
    fx.results.push(fourth);
  });

  it('a Secret edited by hand is noticed and repaired; its other keys stay', async () => {
    const token = fx.emulator.store.add({ name: 'edited', expiresAt: inDays(60) });
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [{ name: 'edited', id: token.id, sinks: [{ type: 'kubernetes-secret', name: 'edited-token', namespace: 'apps' }] }],
    });
    expect((await cli('once')).code).toBe(0);
    // Another field manager adds a key, and someone pastes something else over ours.
    await kubectl(
      'patch',
      'secret',
      'edited-token',
      '-n',
      'apps',
      '--type',
      'merge',
      '-p',
      JSON.stringify({ stringData: { other: 'kept', token: 'pasted-by-hand' } }),
    );
    const repaired = await cli('once', '--json');
    expect(repaired.code, repaired.stderr).toBe(0);
    const [outcome] = itemsOf(repaired.stdout) as Array<{ action: string; reason: string; id: string }>;
    expect(outcome).toMatchObject({ action: 'redeliver', reason: expect.stringMatching(/holds another secret/) });
    expect(await whoami(secretData(k.double, 'apps', 'edited-token', 'token'))).toMatchObject({ id: outcome!.id });
    expect(fx.emulator.requests.filter((r) => r.op === 'regenerate')).toHaveLength(1);
    expect(secretData(k.double, 'apps', 'edited-token', 'other')).toBe('kept');
  });

  it('reports a Secret it does not manage (exit 1, named) and leaves it alone; told to adopt, the next run takes it over', async () => {
    const token = fx.emulator.store.add({ name: 'foreign', expiresAt: inDays(60) });
    await kubectl('create', 'secret', 'generic', 'foreign-token', '-n', 'apps', '--from-literal=token=someone-elses');
    const policy = (adopt: boolean) => ({
      version: 1,
      tokens: [{ name: 'foreign', id: token.id, sinks: [{ type: 'kubernetes-secret', name: 'foreign-token', namespace: 'apps', adopt }] }],
    });
    await writePolicy(fx.dir, policy(false));
    const refused = await cli('once', '--json');
    expect(refused.code).toBe(1);
    const [outcome] = itemsOf(refused.stdout) as Array<{ action: string; drift: Array<{ kind: string; detail: string }> }>;
    expect(outcome).toMatchObject({
      action: 'skip',
      drift: [{ kind: 'unowned', detail: expect.stringMatching(/not managed by token-rotator.*adopt: true/) }],
    });
    expect(secretData(k.double, 'apps', 'foreign-token', 'token')).toBe('someone-elses');
    expect(fx.emulator.requests.filter((r) => r.op === 'regenerate')).toHaveLength(0);

    // Nothing was ever delivered there, so once it may be written, it gets a secret of its own.
    await writePolicy(fx.dir, policy(true));
    const adopted = await cli('once', '--json');
    expect(adopted.code, adopted.stderr).toBe(0);
    expect(itemsOf(adopted.stdout)[0]).toMatchObject({ action: 'rotate' });
    expect(await whoami(secretData(k.double, 'apps', 'foreign-token', 'token'))).toMatchObject({ name: 'foreign' });
    const labels = (k.double.objects.get('secrets', 'apps', 'foreign-token')!.metadata as { labels: Record<string, string> }).labels;
    expect(labels['app.kubernetes.io/managed-by']).toBe('token-rotator');
  });

  it('adopting from the first run takes what the Secret holds as the current secret, as a file is adopted, and rotating writes it as ours', async () => {
    const token = fx.emulator.store.add({ name: 'migrated', expiresAt: inDays(60) });
    await kubectl('create', 'secret', 'generic', 'migrated-token', '-n', 'apps', `--from-literal=token=${token.secret}`);
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [
        { name: 'migrated', id: token.id, sinks: [{ type: 'kubernetes-secret', name: 'migrated-token', namespace: 'apps', adopt: true }] },
      ],
    });
    const first = await cli('once', '--json');
    expect(first.code, first.stderr).toBe(0);
    expect(itemsOf(first.stdout)[0]).toMatchObject({ action: 'skip' });
    expect(fx.emulator.requests.filter((r) => r.op === 'regenerate')).toHaveLength(0);
    const rotated = await cli('rotate', 'migrated', '--yes', '--json');
    expect(rotated.code, rotated.stderr).toBe(0);
    const delivered = secretData(k.double, 'apps', 'migrated-token', 'token');
    expect(delivered).not.toBe(token.secret);
    expect(await whoami(delivered)).toMatchObject({ name: 'migrated' });
  });

  it('restarts a workload consuming several tokens once per run, skips a paused one, and reports a missing one (exit 1)', async () => {
    seedDeployment(k.double, 'apps', 'shared-app', { labels: { tier: 'ingest' } });
    seedDeployment(k.double, 'apps', 'paused-app', { paused: true });
    const a = fx.emulator.store.add({ name: 'multi-a', expiresAt: inDays(2) });
    const b = fx.emulator.store.add({ name: 'multi-b', expiresAt: inDays(2) });
    await writePolicy(fx.dir, {
      version: 1,
      defaults: {
        reload: [
          { type: 'rollout', selector: { tier: 'ingest' }, namespace: 'apps' },
          { type: 'rollout', name: 'paused-app', namespace: 'apps' },
        ],
      },
      tokens: [
        { name: 'multi-a', id: a.id, sinks: [{ type: 'kubernetes-secret', name: 'multi-a', namespace: 'apps' }] },
        {
          name: 'multi-b',
          id: b.id,
          sinks: [{ type: 'kubernetes-secret', name: 'multi-b', namespace: 'apps' }],
          reload: [
            { type: 'rollout', name: 'shared-app', namespace: 'apps' },
            { type: 'rollout', kind: 'StatefulSet', name: 'missing', namespace: 'apps' },
          ],
        },
      ],
    });
    const before = k.double.requests.length;
    const result = await cli('once', '--json');
    expect(result.code).toBe(1);
    const outcomes = itemsOf(result.stdout) as Array<{
      name: string;
      action: string;
      reloads: Array<{ target: string; result: string }>;
    }>;
    expect(outcomes.map((o) => o.action)).toEqual(['rotate', 'rotate']);
    expect(outcomes[0]!.reloads).toEqual([
      { target: 'Deployment apps/shared-app', result: 'restarted' },
      { target: 'Deployment apps/paused-app', result: 'skipped', message: 'paused' },
    ]);
    expect(outcomes[1]!.reloads).toEqual([
      { target: 'Deployment apps/shared-app', result: 'restarted' },
      { target: 'StatefulSet apps/missing', result: 'failed', message: 'StatefulSet apps/missing does not exist' },
    ]);
    expect(writes(before, '/deployments/shared-app')).toHaveLength(1);
    expect(writes(before, '/deployments/paused-app')).toHaveLength(0);
    expect(result.stderr).toContain('not restarted: the Deployment is paused');
    // The rotations stand: the next run does nothing, and does not retry the restart.
    const again = await cli('once', '--json');
    expect(again.code, again.stderr).toBe(0);
    expect(itemsOf(again.stdout).map((o: { action: string }) => o.action)).toEqual(['skip', 'skip']);
  });

  describe('SIGKILL at each step with the Kubernetes backend: nothing lost, nothing regenerated twice', () => {
    it.each([
      { step: 'intent', regenerated: 1, orphans: 0 },
      { step: 'regenerated', regenerated: 2, orphans: 1 },
      { step: 'staged', regenerated: 1, orphans: 0 },
      { step: 'written', regenerated: 1, orphans: 0 },
      { step: 'delivered', regenerated: 1, orphans: 0 },
      { step: 'committed', regenerated: 1, orphans: 0 },
    ])('killed at $step', async ({ step, regenerated, orphans }) => {
      const name = `killed-${step}`;
      const token = fx.emulator.store.add({ name, expiresAt: inDays(1) });
      await writePolicy(fx.dir, {
        version: 1,
        tokens: [
          {
            name,
            id: token.id,
            sinks: [
              { type: 'kubernetes-secret', name: `${name}-a`, namespace: 'apps' },
              { type: 'kubernetes-secret', name: `${name}-b`, namespace: 'apps', format: 'json' },
            ],
          },
        ],
      });
      const killed = await runCli(['once', '--config', 'rotation.yaml', '--dotenv', fx.envFile], {
        cwd: fx.dir,
        env: { ROTATOR_TEST_FAILPOINT: step },
      });
      fx.results.push(killed);
      expect(killed.signal).toBe('SIGKILL');
      if (step === 'staged') {
        // The staged secret waits in the state Secret, sealed.
        const stateSecret = stateSecrets()[0]!;
        const journal = Buffer.from((stateSecret.data as { journal: string }).journal, 'base64').toString('utf8');
        expect(JSON.parse(journal)).toMatchObject({ phase: 'staged', staged: { secret: { sealed: { alg: 'A256GCM' } } } });
        expectStateWithoutSecrets();
      }
      // The dead process's Lease is taken over once it has stood still for its duration (3 s here).
      const after = await cli('once', '--json');
      expect(after.code, after.stderr).toBe(orphans > 0 ? 1 : 0);
      expect((killed.stderr + after.stderr).match(/ORPHANED TOKEN/g) ?? []).toHaveLength(orphans);
      expect(fx.emulator.requests.filter((r) => r.op === 'regenerate' && r.committed)).toHaveLength(regenerated);
      const record = JSON.parse(Buffer.from((stateSecrets()[0]!.data as { record: string }).record, 'base64').toString('utf8')) as {
        currentId: string;
      };
      expect(await whoami(secretData(k.double, 'apps', `${name}-a`, 'token'))).toMatchObject({ id: record.currentId });
      const json = JSON.parse(secretData(k.double, 'apps', `${name}-b`, 'token')!) as { token: string; id: string };
      expect(await whoami(json.token)).toMatchObject({ id: record.currentId });
      expect((stateSecrets()[0]!.data as Record<string, string>).journal).toBeUndefined();
      expectStateWithoutSecrets();
      // And a third run finds nothing to do.
      const third = await cli('once', '--json');
      expect(third.code, third.stderr).toBe(0);
      expect(itemsOf(third.stdout)[0]).toMatchObject({ action: 'skip' });
    });
  });

  it('two daemons on one namespace never rotate a name twice, and restart the shared app at most once each', async () => {
    seedDeployment(k.double, 'apps', 'fleet');
    const tokens = ['fleet-a', 'fleet-b', 'fleet-c', 'fleet-d'].map((name) => fx.emulator.store.add({ name, expiresAt: inDays(2) }));
    await writePolicy(fx.dir, {
      version: 1,
      defaults: { schedule: '* * * * * *', reload: [{ type: 'rollout', name: 'fleet', namespace: 'apps' }] },
      tokens: tokens.map((t) => ({ name: t.name, id: t.id, sinks: [{ type: 'kubernetes-secret', name: `${t.name}`, namespace: 'apps' }] })),
    });
    const daemons = [0, 1].map(() =>
      startCli(['daemon', '--listen', '127.0.0.1:0', '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir }),
    );
    try {
      await expect
        .poll(() => tokens.every((t) => secretData(k.double, 'apps', t.name, 'token') !== undefined), { timeout: 30_000, interval: 200 })
        .toBe(true);
      // Both keep checking every second for a while after: nothing is due any more.
      await new Promise((r) => setTimeout(r, 4_000));
    } finally {
      for (const d of daemons) d.child.kill('SIGTERM');
    }
    const results = await Promise.all(daemons.map((d) => d.done));
    fx.results.push(...results);
    expect(results.map((r) => r.code)).toEqual([0, 0]);
    const committed = fx.emulator.requests.filter((r) => r.op === 'regenerate' && r.committed);
    expect(committed.map((r) => r.id).sort()).toEqual(tokens.map((t) => t.id).sort());
    for (const t of tokens) {
      expect(await whoami(secretData(k.double, 'apps', t.name, 'token'))).toMatchObject({ name: t.name });
    }
    const restarts = k.double.requests.filter((r) => r.method === 'PATCH' && r.path.endsWith('/deployments/fleet')).length;
    expect(restarts).toBeGreaterThanOrEqual(1);
    expect(restarts).toBeLessThanOrEqual(2);
  });
});

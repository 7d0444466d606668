import { describe, expect, it } from 'vitest';

import { emulatorSecrets, startCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { kubectlIn } from '../helpers/kubectl.js';
import { secretData, seedDeployment, useKubernetesDouble } from '../helpers/kubernetes.js';
import { expectNoLeak } from '../helpers/leaks.js';
import { itemsOf } from '../helpers/output-items.js';

const DAY = 24 * 3600_000;
const inDays = (d: number) => new Date(Date.now() + d * DAY);

const k = useKubernetesDouble();

/**
 * What on-call sees in the cluster: the Events token-rotator records on the Secret it delivers to
 * and the workload it restarts, read with the real kubectl against the API double.
 */
describe('Kubernetes Events of a rotation and a repair, through kubectl', () => {
  const fx = useCliFixture({ env: () => k.env });
  const kubectl = async (...args: string[]) => {
    const result = await kubectlIn(fx.dir, k.kubeconfig, ...args);
    expect(result.code, `kubectl ${args.join(' ')}: ${result.stderr}`).toBe(0);
    return result.stdout;
  };
  const eventRequests = () => k.double.requests.filter((r) => r.path.includes('/events'));

  async function policyFor(name: string, secret: string, deployment: string) {
    const token = fx.emulator.store.add({ name, expiresAt: inDays(60) });
    seedDeployment(k.double, 'apps', deployment);
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [
        {
          name,
          id: token.id,
          sinks: [{ type: 'kubernetes-secret', name: secret, namespace: 'apps' }],
          reload: [{ type: 'rollout', name: deployment, namespace: 'apps' }],
        },
      ],
    });
  }

  it('shows Rotated, RolloutRestarted and, after a key is deleted from the Secret, Repaired; never a secret', async () => {
    await policyFor('ingest', 'ingest-token', 'ingest-api');
    const first = await fx.cli('once', '--json');
    expect(first.code, first.stderr).toBe(0);
    expect(itemsOf(first.stdout)[0]).toMatchObject({ action: 'rotate' });

    // Someone removes the key: the next run delivers the held secret again, and mints nothing.
    const regenerates = () => fx.emulator.requests.filter((r) => r.op === 'regenerate').length;
    expect(regenerates()).toBe(1);
    await kubectl('patch', 'secret', 'ingest-token', '-n', 'apps', '--type=json', '-p', '[{"op":"remove","path":"/data/token"}]');
    const second = await fx.cli('once', '--json');
    expect(second.code, second.stderr).toBe(0);
    expect(itemsOf(second.stdout)[0]).toMatchObject({ action: 'redeliver' });
    expect(regenerates(), 'the repair regenerated').toBe(1);
    expect(secretData(k.double, 'apps', 'ingest-token', 'token')).toBeDefined();

    const listed = await kubectl('get', 'events', '-n', 'apps');
    expect(listed).toMatch(/Normal\s+Rotated\s+secret\/ingest-token\s+token 'ingest' rotated: \S+ -> \S+/);
    expect(listed).toMatch(
      /Normal\s+Repaired\s+secret\/ingest-token\s+token 'ingest' \(\S+\): kubernetes-secret apps\/ingest-token\[token\] .*; delivered the current secret again/,
    );
    expect(listed).toMatch(/Normal\s+RolloutRestarted\s+deployment\/ingest-api\s+restarted: token 'ingest' was rotated to \S+/);
    const forSecret = await kubectl('events', '-n', 'apps', '--for', 'secret/ingest-token');
    expect(forSecret).toMatch(/Rotated/);
    expect(forSecret).toMatch(/Repaired/);
    const wide = await kubectl('get', 'events', '-n', 'apps', '-o', 'wide');
    expect(wide).toMatch(/token-rotator, \S+/);

    // As `kubectl describe` finds an object's Events: by kind, name and uid.
    const uid = (k.double.objects.get('deployments', 'apps', 'ingest-api')!.metadata as { uid: string }).uid;
    const byUid = await kubectl(
      'get',
      'events',
      '-n',
      'apps',
      '--field-selector',
      `involvedObject.kind=Deployment,involvedObject.name=ingest-api,involvedObject.uid=${uid}`,
    );
    expect(byUid).toMatch(/RolloutRestarted/);
    const describedDeployment = await kubectl('describe', 'deployment', 'ingest-api', '-n', 'apps');
    expect(describedDeployment).toMatch(
      /Events:[\s\S]*Normal\s+RolloutRestarted\s+\S+\s+token-rotator\s+restarted: token 'ingest' was rotated/,
    );

    // The Secret says what manages it, and for which token.
    const described = await kubectl('describe', 'secret', 'ingest-token', '-n', 'apps');
    expect(described).toMatch(/Labels:\s+app\.kubernetes\.io\/managed-by=token-rotator/);
    expect(described).toMatch(/token-rotator\.io\/token-name: ingest/);

    const everything = await kubectl('get', 'events.events.k8s.io', '-n', 'apps', '-o', 'json');
    expectNoLeak({ events: everything }, emulatorSecrets(fx.emulator));
  });

  it('rotates all the same when the Events are refused (403), and says so once', async () => {
    await policyFor('query', 'query-token', 'query-api');
    k.double.forbidden.push({ verb: 'create', resource: 'events', namespace: 'apps' });
    try {
      const run = await fx.cli('once', '--json');
      expect(run.code, run.stderr).toBe(0);
      expect(itemsOf(run.stdout)[0]).toMatchObject({ action: 'rotate' });
      expect(secretData(k.double, 'apps', 'query-token', 'token')).toBeDefined();
      expect(run.stderr.match(/may not create events/g)).toHaveLength(1);
    } finally {
      k.double.forbidden.length = 0;
    }
  });

  it('records nothing with ROTATOR_KUBERNETES_EVENTS=off', async () => {
    await policyFor('search', 'search-token', 'search-api');
    const before = eventRequests().length;
    const { appendFile } = await import('node:fs/promises');
    await appendFile(fx.envFile, 'ROTATOR_KUBERNETES_EVENTS=off\n');
    const run = await fx.cli('once', '--json');
    expect(run.code, run.stderr).toBe(0);
    expect(itemsOf(run.stdout)[0]).toMatchObject({ action: 'rotate' });
    expect(eventRequests().slice(before)).toEqual([]);
  });

  it('the daemon records them too, on the Secret and on the workload it restarts', async () => {
    await policyFor('logs', 'logs-token', 'logs-api');
    const daemon = startCli(['daemon', '--listen', '127.0.0.1:0', '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir });
    const reasonsOn = (name: string) =>
      (k.double.objects.list('events', 'apps') as Array<{ reason: string; regarding: { name: string } }>)
        .filter((e) => e.regarding.name === name)
        .map((e) => e.reason);
    try {
      await expect
        .poll(() => [...reasonsOn('logs-token'), ...reasonsOn('logs-api')], { timeout: 60_000, interval: 200 })
        .toEqual(['Rotated', 'RolloutRestarted']);
    } finally {
      daemon.child.kill('SIGTERM');
    }
    const result = await daemon.done;
    fx.results.push(result);
    expect(result.code, result.stderr).toBe(0);
  }, 120_000);
});

// Row 2c (goal 5 of issue 25: the request floor stays), for Kubernetes Secret sinks: reads scale with destinations, not tokens. `plan`
// over N tokens whose Secrets are in one namespace reads them with one LIST by our label, not a GET
// per Secret. Counted at the Kubernetes API double (its request log has the verb of each request).
// Part of npm run bench (bench/run.mjs); `node bench/kubernetes-request-floor.mjs` runs it alone.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { stringify } from 'yaml';

import { childEnv, QUICK, rotatorFolder, runCli, runStandalone, seedTokens, startCountedEmulator } from './lib.mjs';

export async function kubernetesRequestFloor({ count }) {
  const { startKubernetesDouble } = await import('token-rotator-kubernetes-double');
  const { emulator } = await startCountedEmulator();
  const double = await startKubernetesDouble({ namespaces: ['apps', 'token-rotator'] });
  const tokens = seedTokens(emulator, count, { due: 0, prefix: 'k8s' });
  const folder = await rotatorFolder(emulator, tokens, { prefix: 'token-rotator-k8s-floor-' });
  try {
    const kubeconfig = join(folder.dir, 'kubeconfig');
    await writeFile(kubeconfig, double.kubeconfig({ namespace: 'token-rotator' }), { mode: 0o600 });
    await writeFile(
      join(folder.dir, 'rotation.yaml'),
      stringify({
        version: 1,
        tokens: tokens.map((t) => ({ name: t.name, id: t.id, sinks: [{ type: 'kubernetes-secret', name: t.name, namespace: 'apps' }] })),
      }),
    );
    const env = childEnv({ KUBECONFIG: kubeconfig, HOME: folder.dir });
    // The first run delivers every Secret (each is new to the policy); the plan after it is a check.
    const once = await runCli(['once', ...folder.args], { cwd: folder.dir, env });
    if (once.code !== 0) throw new Error(`once exited ${once.code}\n${once.stderr.slice(-1500)}`);
    const before = double.requests.length;
    const plan = await runCli(['plan', '--json', ...folder.args], { cwd: folder.dir, env });
    if (plan.code !== 0) throw new Error(`plan exited ${plan.code}\n${plan.stderr.slice(-1500)}`);
    const secrets = double.requests.slice(before).filter((r) => /\/namespaces\/apps\/secrets(\/|$|\?)/.test(r.path));
    const lists = secrets.filter((r) => r.verb === 'list').length;
    const gets = secrets.filter((r) => r.verb === 'get').length;
    const others = secrets.length - lists - gets;
    return {
      id: '2c',
      goal: `2 request floor: plan, ${count} Kubernetes Secrets in one namespace`,
      target: '1 LIST, 0 GET of a Secret',
      measured: `${lists} LIST + ${gets} GET${others ? ` + ${others} other` : ''}`,
      baseline: `a GET per Secret: ${count}`,
      result: lists === 1 && gets === 0 && others === 0 ? 'pass' : 'short',
      value: secrets.length,
      unit: 'requests',
      details: { lists, gets, others },
    };
  } finally {
    await Promise.all([emulator.close(), double.close()]);
    await folder.remove();
  }
}

await runStandalone(import.meta.url, () => kubernetesRequestFloor({ count: QUICK ? 5 : 50 }));

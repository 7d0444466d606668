// The idle RSS of a sidecar-shaped daemon (one token) with a Kubernetes Secret sink, a rollout reload
// and the Kubernetes state backend, against the API double; and the same daemon with a file sink and
// the file backend, for comparison. Goal 3 of issue 25 for the Kubernetes shape: ≤ 85 MB, launched as
// the image launches it (with its NODE_OPTIONS).
//   NODE_OPTIONS   for the daemon; default "--max-semi-space-size=1", as in the container image
// Part of npm run bench (bench/run.mjs); `node bench/kubernetes-sidecar-memory.mjs` runs it alone.
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { stringify } from 'yaml';

import {
  childEnv,
  CLI,
  freePort,
  IMAGE_NODE_OPTIONS,
  mb,
  metricsOf,
  QUICK,
  rotatorFolder,
  rssOf,
  runStandalone,
  sleep,
  startCountedEmulator,
  startNode,
  waitFor,
} from './lib.mjs';

const GOAL_MB = 85;

async function idleRss(emulator, token, shape, { settleMs, samples, everyMs }) {
  const port = await freePort();
  const folder = await rotatorFolder(emulator, [token], {
    defaults: { schedule: '0 * * * *' },
    env: { ROTATOR_LISTEN: `127.0.0.1:${port}`, ROTATOR_LOG_LEVEL: 'warn' },
    prefix: 'token-rotator-k8s-bench-',
  });
  // The policy of this shape replaces the file-sink one rotatorFolder wrote.
  const kubernetes = shape.kubernetes ? await shape.kubernetes(folder.dir) : {};
  await writeFile(
    join(folder.dir, 'rotation.yaml'),
    stringify({ version: 1, defaults: { schedule: '0 * * * *' }, tokens: [{ name: token.name, id: token.id, ...shape.token }] }),
  );
  const daemon = startNode([CLI, 'daemon', ...folder.args], {
    cwd: folder.dir,
    env: childEnv({ NODE_OPTIONS: IMAGE_NODE_OPTIONS, HOME: folder.dir, ...kubernetes }),
  });
  try {
    if (!(await waitFor(async () => (await metricsOf(port)) !== undefined, 20_000))) throw new Error(`no /metrics\n${daemon.stderr()}`);
    await sleep(settleMs); // the first check (a rotation: the sink is new), its reload, and settling
    const values = [];
    for (let i = 0; i < samples; i++) {
      if (i > 0) await sleep(everyMs);
      values.push(rssOf(daemon.child.pid) ?? (await metricsOf(port))?.rss);
    }
    return values;
  } finally {
    await daemon.stop();
    await folder.remove();
  }
}

export async function kubernetesSidecar({ settleMs = 10_000, samples = 3, everyMs = 3000 } = {}) {
  const { startKubernetesDouble } = await import('token-rotator-kubernetes-double');
  const { emulator } = await startCountedEmulator();
  const double = await startKubernetesDouble({ namespaces: ['apps', 'token-rotator'] });
  double.objects.put({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'app', namespace: 'apps', labels: { app: 'app' } },
    spec: {
      selector: { matchLabels: { app: 'app' } },
      template: { metadata: { labels: { app: 'app' } }, spec: { containers: [{ name: 'app', image: 'example/app:1' }] } },
    },
  });
  try {
    const shapes = {
      file: { token: { sinks: [{ type: 'file', path: 'secrets/app.token' }] } },
      kubernetes: {
        token: {
          sinks: [{ type: 'kubernetes-secret', name: 'app-token', namespace: 'apps' }],
          reload: [{ type: 'rollout', name: 'app', namespace: 'apps' }],
        },
        async kubernetes(dir) {
          const file = join(dir, 'kubeconfig');
          await writeFile(file, double.kubeconfig({ namespace: 'token-rotator' }), { mode: 0o600 });
          return { KUBECONFIG: file, ROTATOR_STATE_BACKEND: 'kubernetes' };
        },
      },
    };
    const rss = {};
    for (const [what, shape] of Object.entries(shapes)) {
      const token = emulator.store.add({ name: `app-${randomBytes(3).toString('hex')}`, expiresAt: new Date(Date.now() + 60 * 86400_000) });
      rss[what] = await idleRss(emulator, token, shape, { settleMs, samples, everyMs });
    }
    const worst = Math.max(...rss.kubernetes);
    return {
      id: 'x1',
      goal: 'sidecar (1 token): Kubernetes sink+reload+backend, idle RSS',
      target: `≤ ${GOAL_MB} MB`,
      measured: `${mb(worst)} MB`,
      baseline: `file sink+backend: ${mb(Math.max(...rss.file))} MB`,
      result: worst <= GOAL_MB * 1024 * 1024 ? 'pass' : 'short',
      value: worst / 1024 / 1024,
      unit: 'MB',
      details: {
        nodeOptions: IMAGE_NODE_OPTIONS,
        kubernetesMB: rss.kubernetes.map((v) => Number(mb(v))),
        fileMB: rss.file.map((v) => Number(mb(v))),
      },
    };
  } finally {
    await Promise.all([emulator.close(), double.close()]);
  }
}

await runStandalone(import.meta.url, () => kubernetesSidecar(QUICK ? { settleMs: 2000, samples: 1 } : {}));

// Part of npm run bench: the idle RSS of a sidecar-shaped daemon (one token) with a Kubernetes Secret
// sink, a rollout reload and the Kubernetes state backend, against the API double; and the same
// daemon with a file sink and the file backend, for comparison. Budget: under 90 MB on Node 24.
//   NODE_OPTIONS   for the daemon; default "--max-semi-space-size=1", as in the container image
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { stringify } from 'yaml';

import { startKubernetesDouble } from '../dist/emulator/kubernetes/index.js';
import { startEmulator } from '../dist/emulator/start-emulator.js';

const NODE_OPTIONS = process.env.NODE_OPTIONS ?? '--max-semi-space-size=1';
const CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const BUDGET_MB = 90;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const mb = (bytes) => (bytes / 1024 / 1024).toFixed(1);

async function idleRss(emulator, token, shape) {
  const dir = await mkdtemp(join(tmpdir(), 'token-rotator-k8s-bench-'));
  const port = 30000 + Math.floor(Math.random() * 20000);
  try {
    const kubernetes = shape.kubernetes ? await shape.kubernetes(dir) : {};
    await writeFile(
      join(dir, 'rotation.yaml'),
      stringify({ version: 1, defaults: { schedule: '0 * * * *' }, tokens: [{ name: token.name, id: token.id, ...shape.token }] }),
    );
    const env = {
      ...emulator.rotatorEnv(),
      ...kubernetes,
      ROTATOR_STATE_DIR: join(dir, 'state'),
      ROTATOR_STATE_KEY: randomBytes(32).toString('base64'),
      ROTATOR_LISTEN: `127.0.0.1:${port}`,
      ROTATOR_LOG_LEVEL: 'warn',
    };
    await writeFile(
      join(dir, 'rotator.env'),
      Object.entries(env)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n'),
      { mode: 0o600 },
    );
    const daemon = spawn(process.execPath, [CLI, 'daemon', '--config', 'rotation.yaml', '--dotenv', 'rotator.env'], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { PATH: process.env.PATH, NODE_OPTIONS, HOME: dir },
    });
    const rss = async () => {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      return Number(
        text
          .split('\n')
          .find((l) => l.startsWith('process_resident_memory_bytes'))
          .split(' ')
          .pop(),
      );
    };
    for (let i = 0; i < 100; i++) {
      try {
        await rss();
        break;
      } catch {
        await sleep(100);
      }
    }
    await sleep(15_000); // the first check (a rotation: the sink is new), its reload, and settling
    const samples = [await rss()];
    for (let i = 0; i < 3; i++) {
      await sleep(5000);
      samples.push(await rss());
    }
    daemon.kill('SIGTERM');
    await new Promise((resolve) => daemon.on('close', resolve));
    return samples;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const emulator = await startEmulator();
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
  console.log(`sidecar-shaped daemon (1 token), node ${process.version}, NODE_OPTIONS="${NODE_OPTIONS}"`);
  const shapes = {
    'file sink, file backend': { token: { sinks: [{ type: 'file', path: 'secrets/app.token' }] } },
    'Kubernetes Secret sink, rollout reload, Kubernetes backend': {
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
  let worst = 0;
  for (const [what, shape] of Object.entries(shapes)) {
    const token = emulator.store.add({ name: `app-${randomBytes(3).toString('hex')}`, expiresAt: new Date(Date.now() + 60 * 86400_000) });
    const samples = await idleRss(emulator, token, shape);
    if (shape.kubernetes) worst = Math.max(...samples);
    console.log(`  ${what}: idle RSS ${samples.map(mb).join(' -> ')} MB`);
  }
  console.log(
    `  budget (Kubernetes shape idle under ${BUDGET_MB} MB): ${worst < BUDGET_MB * 1024 * 1024 ? 'met' : 'NOT met'} (${mb(worst)} MB)`,
  );
} finally {
  await Promise.all([emulator.close(), double.close()]);
}

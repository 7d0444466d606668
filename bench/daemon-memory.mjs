// npm run bench: the daemon's memory with 100 tokens configured, idle and under many checks.
// Real daemon processes against the in-process emulator; RSS is read from the daemon's own /metrics.
//   BENCH_SECONDS   how long the busy phase checks every token every second (default 60)
//   BENCH_TOKENS    how many tokens (default 100)
//   NODE_OPTIONS    for the daemon; default "--max-semi-space-size=1", as in the container image
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { stringify } from 'yaml';

import { startEmulator } from '../dist/emulator/start-emulator.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const TOKENS = Number(process.env.BENCH_TOKENS ?? 100);
const NODE_OPTIONS = process.env.NODE_OPTIONS ?? '--max-semi-space-size=1';
const CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const mb = (bytes) => (bytes / 1024 / 1024).toFixed(1);

async function runDaemon(emulator, tokens, schedule, seconds) {
  const dir = await mkdtemp(join(tmpdir(), 'token-rotator-bench-'));
  const port = 30000 + Math.floor(Math.random() * 20000);
  try {
    await writeFile(
      join(dir, 'rotation.yaml'),
      stringify({
        version: 1,
        defaults: { schedule },
        tokens: tokens.map((t) => ({ name: t.name, id: t.id, sinks: [{ type: 'file', path: `secrets/${t.name}.token` }] })),
      }),
    );
    const env = {
      ...emulator.rotatorEnv(),
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
      env: { PATH: process.env.PATH, NODE_OPTIONS },
    });
    const metrics = async () => {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      const value = (name) =>
        Number(
          text
            .split('\n')
            .find((l) => l.startsWith(name))
            ?.split(' ')
            .pop() ?? NaN,
        );
      const checks = text
        .split('\n')
        .filter((l) => l.startsWith('token_rotator_api_requests_total{op="retrieve"'))
        .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
      return { rss: value('process_resident_memory_bytes'), heap: value('nodejs_heap_size_used_bytes'), checks };
    };
    for (let i = 0; i < 100; i++) {
      try {
        await metrics();
        break;
      } catch {
        await sleep(100);
      }
    }
    await sleep(5000); // the first check of every token, and warm-up
    const samples = [await metrics()];
    const started = Date.now();
    while (Date.now() - started < seconds * 1000) {
      await sleep(Math.min(10_000, seconds * 1000));
      samples.push(await metrics());
    }
    daemon.kill('SIGTERM');
    await new Promise((resolve) => daemon.on('close', resolve));
    return samples;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const emulator = await startEmulator({ rateLimitPerMinute: 10_000_000 });
try {
  const tokens = Array.from({ length: TOKENS }, (_, i) =>
    emulator.store.add({ name: `token-${i}`, expiresAt: new Date(Date.now() + 60 * 86400_000) }),
  );
  console.log(`daemon with ${TOKENS} tokens, node ${process.version}, NODE_OPTIONS="${NODE_OPTIONS}"`);

  const idle = await runDaemon(emulator, tokens, '0 * * * *', 10);
  console.log(
    `  idle (hourly checks), after the first check of every token: RSS ${mb(idle.at(-1).rss)} MB, heap used ${mb(idle.at(-1).heap)} MB`,
  );

  const busy = await runDaemon(emulator, tokens, '*/1 * * * * *', SECONDS);
  // RSS and heap swing with garbage collection; the lowest sample of each half is the closest to
  // what survives a collection, so growth is the second half's lowest against the first half's.
  const half = Math.ceil(busy.length / 2);
  const lowest = (samples, key) => Math.min(...samples.map((s) => s[key]));
  const growth = lowest(busy.slice(half), 'rss') - lowest(busy.slice(0, half), 'rss');
  const heapGrowth = lowest(busy.slice(half), 'heap') - lowest(busy.slice(0, half), 'heap');
  console.log(
    `  busy (every token every second, ${SECONDS}s, ${busy.at(-1).checks - busy[0].checks} checks): RSS ${busy.map((s) => mb(s.rss)).join(' -> ')} MB`,
  );
  console.log(`  growth, lowest of the second half against the first: RSS ${mb(growth)} MB, heap used ${mb(heapGrowth)} MB`);
  const ok = idle.at(-1).rss < 60 * 1024 * 1024 && growth < 2 * 1024 * 1024 && heapGrowth < 1024 * 1024;
  console.log(`  goal (idle under 60 MB, no growth): ${ok ? 'met' : 'NOT met'}`);
} finally {
  await emulator.close();
}

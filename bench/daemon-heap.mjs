// Part of npm run bench: does the daemon keep memory per check? The daemon runs in this process
// (node --expose-gc) against an emulator in its own process, checking every token every second;
// the live heap is measured after a full garbage collection every 10 seconds.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { stringify } from 'yaml';

import { systemClock } from '../dist/clock.js';
import { readEnvironment, readSettings } from '../dist/config/env.js';
import { loadPolicy } from '../dist/config/load-policy.js';
import { startDaemon } from '../dist/daemon/start-daemon.js';
import { createLogger } from '../dist/log/logger.js';

if (typeof global.gc !== 'function') throw new Error('run with node --expose-gc');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const TOKENS = Number(process.env.BENCH_TOKENS ?? 100);
const CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const mb = (bytes) => (bytes / 1024 / 1024).toFixed(2);

const dir = await mkdtemp(join(tmpdir(), 'token-rotator-heap-'));
const names = Array.from({ length: TOKENS }, (_, i) => `token-${i}`);
await writeFile(
  join(dir, 'seed.yaml'),
  stringify({ rateLimitPerMinute: 10_000_000, tokens: names.map((name) => ({ id: `${name}-id`, name, expiresIn: '60d' })) }),
);
const emulator = spawn(process.execPath, [CLI, 'emulator', '--seed', 'seed.yaml', '--env-out', 'emulator.env'], {
  cwd: dir,
  stdio: 'ignore',
});
try {
  for (let i = 0; i < 100 && !(await readFile(join(dir, 'emulator.env'), 'utf8').catch(() => '')); i++) await sleep(100);
  await writeFile(
    join(dir, 'rotation.yaml'),
    stringify({
      version: 1,
      defaults: { schedule: '*/1 * * * * *' },
      tokens: names.map((name) => ({ name, id: `${name}-id`, sinks: [{ type: 'file', path: `secrets/${name}.token` }] })),
    }),
  );
  const env = readEnvironment({ ROTATOR_STATE_DIR: join(dir, 'state') }, { envFile: 'emulator.env', cwd: dir });
  const settings = readSettings(env, dir);
  const daemon = await startDaemon({
    settings,
    policy: await loadPolicy(join(dir, 'rotation.yaml')),
    notify: async () => undefined,
    listen: { host: '127.0.0.1', port: 0 },
    logger: createLogger({ level: 'silent' }),
    clock: systemClock,
    env,
  });
  const samples = [];
  for (let t = 0; t <= SECONDS; t += 10) {
    await sleep(t === 0 ? 5000 : 10_000);
    global.gc();
    samples.push(process.memoryUsage().heapUsed);
  }
  await daemon.stop(5000);
  const perCheck = (samples.at(-1) - samples[0]) / (SECONDS * TOKENS);
  console.log(`live heap after each full collection, ${TOKENS} tokens checked every second for ${SECONDS}s:`);
  console.log(`  ${samples.map(mb).join(' -> ')} MB`);
  console.log(`  growth: ${mb(samples.at(-1) - samples[0])} MB over ${SECONDS * TOKENS} checks (${perCheck.toFixed(0)} bytes per check)`);
} finally {
  emulator.kill('SIGTERM');
  await rm(dir, { recursive: true, force: true });
}

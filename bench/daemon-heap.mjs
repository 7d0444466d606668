// Row 5b (goal 3 of issue 25, no growth over 10,000 checks): does the daemon keep memory per check? A real daemon process (the
// built CLI, preloaded with bench/heap-probe.mjs under --expose-gc) checks every one of N tokens every
// second against the in-process emulator; every few seconds it is made to collect garbage in full and
// report its live heap, until it has made the number of checks asked for (counted at the emulator).
// RSS sampled from outside cannot tell a leak from collection timing; the live heap after a full
// collection can. The growth is the least-squares slope of the live heap over the checks.
//   NODE_OPTIONS   for the daemon; default "--max-semi-space-size=1", as in the container image
// Part of npm run bench (bench/run.mjs); `node bench/daemon-heap.mjs` runs it alone.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import {
  childEnv,
  CLI,
  freePort,
  IMAGE_NODE_OPTIONS,
  mb,
  QUICK,
  ROOT,
  rotatorFolder,
  runStandalone,
  seedTokens,
  sleep,
  slope,
  startCountedEmulator,
  startNode,
  waitFor,
} from './lib.mjs';

const PROBE = pathToFileURL(join(ROOT, 'bench/heap-probe.mjs')).href;
const GROWTH_LIMIT = 1024 * 1024; // "no growth": under 1 MB of live heap per 10,000 checks

export async function daemonHeap({ count = 100, checks = 10_000, warmupMs = 5000, sampleEveryMs = 10_000, maxMs = 180_000 } = {}) {
  const { emulator, counter } = await startCountedEmulator();
  // Deployed, not due: every check is one GET of an unchanged id, and nothing is rotated.
  const tokens = seedTokens(emulator, count, { due: 0, prefix: 'heap' });
  const folder = await rotatorFolder(emulator, tokens, {
    defaults: { schedule: '*/1 * * * * *' },
    deployed: tokens,
    env: { ROTATOR_LISTEN: `127.0.0.1:${await freePort()}`, ROTATOR_LOG_LEVEL: 'warn' },
  });
  const probeFile = join(folder.dir, 'heap-probe.jsonl');
  const ids = new Set(tokens.map((t) => t.id));
  const checksSoFar = () => counter.classify(ids).checkGet;
  const daemon = startNode(['--expose-gc', '--import', PROBE, CLI, 'daemon', ...folder.args], {
    cwd: folder.dir,
    env: childEnv({ NODE_OPTIONS: IMAGE_NODE_OPTIONS, BENCH_HEAP_PROBE: probeFile }),
  });
  const lines = async () => (await readFile(probeFile, 'utf8').catch(() => '')).split('\n').filter(Boolean);
  const sample = async () => {
    const before = (await lines()).length;
    const at = checksSoFar();
    daemon.child.kill('SIGUSR2');
    if (!(await waitFor(async () => (await lines()).length > before, 10_000)))
      throw new Error(`the heap probe did not answer\n${daemon.stderr()}`);
    return { checks: at, ...JSON.parse((await lines())[before]) };
  };
  const samples = [];
  const started = Date.now();
  try {
    if (!(await waitFor(() => checksSoFar() >= count, 60_000))) throw new Error(`the daemon did not check its tokens\n${daemon.stderr()}`);
    await sleep(warmupMs);
    samples.push(await sample());
    while (checksSoFar() - samples[0].checks < checks && Date.now() - started < maxMs) {
      await sleep(Math.min(sampleEveryMs, 1000 + ((checks - (checksSoFar() - samples[0].checks)) / count) * 1000));
      samples.push(await sample());
    }
    if (samples.at(-1).checks - samples[0].checks < checks) samples.push(await sample());
  } finally {
    await daemon.stop();
    await emulator.close();
    await folder.remove();
  }
  const first = samples[0];
  const last = samples.at(-1);
  const done = last.checks - first.checks;
  const perCheck = slope(samples.map((s) => ({ x: s.checks, y: s.heapUsed })));
  const per10k = perCheck * 10_000;
  const rssBusy = samples.map((s) => s.rssBefore);
  return {
    id: '5b',
    goal: `5 memory: live heap growth, ${count} tokens checked every second`,
    target: `< 1 MB per 10,000 checks`,
    measured: `${per10k >= 0 ? '+' : ''}${mb(per10k)} MB per 10,000 (${perCheck.toFixed(0)} B/check; ${done} checks)`,
    baseline: `live heap ${mb(first.heapUsed)} -> ${mb(last.heapUsed)} MB`,
    result: done < Math.min(checks, 1000) ? 'error' : per10k < GROWTH_LIMIT ? 'pass' : 'short',
    value: per10k / 1024 / 1024,
    unit: 'MB per 10,000 checks',
    details: {
      checks: done,
      seconds: (Date.now() - started) / 1000,
      liveHeapMB: samples.map((s) => Number(mb(s.heapUsed))),
      busyRssMB: { min: Number(mb(Math.min(...rssBusy))), max: Number(mb(Math.max(...rssBusy))) },
      rssAfterGcMB: samples.map((s) => Number(mb(s.rss))),
      nodeOptions: IMAGE_NODE_OPTIONS,
    },
  };
}

await runStandalone(import.meta.url, () => daemonHeap(QUICK ? { count: 50, checks: 300, warmupMs: 1000, sampleEveryMs: 2000 } : {}));

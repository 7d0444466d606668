// npm run bench: every goal of issue 25 (performance and footprint, second pass) beside its target,
// with the baseline measured in the same run, and pass/short. Rows keep the ids of issue 12's bench
// (1 once, 2 request floor, 3 rate limit, 4 start-up, 5 memory, 6 scale, x sidecar and syscalls).
// Every figure is taken from the built CLI (dist/cli/main.js) in child processes on this Node
// (process.execPath: the project's Node 24 under npm scripts), against the emulator in this process.
//
//   BENCH_QUICK=1        small sizes, a smoke run of every measurement (seconds, figures meaningless)
//   BENCH_OUT=FILE       also write the results as JSON to FILE
//   BENCH_ONLY=a,b       only these parts: startup, throughput, floor, scale, memory, heap, ratelimit, sidecar, syscalls
//   BENCH_CONCURRENCY=N  the concurrency of the latency bound (default: the rotator's, from src/config/env.ts)
//   NODE_OPTIONS         for the image-shaped daemons (5d, x1); default "--max-semi-space-size=1" (the image's);
//                        5a and 5e run without it, as users launch the daemon
//
// RESULT: pass (goal met), short (not met), stated (a figure the goal asks to state), error (the
// measurement itself failed: the figure is not to be trusted), n/a (could not be measured here).
import { writeFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';

import { daemonHeap } from './daemon-heap.mjs';
import { daemonMemory } from './daemon-memory.mjs';
import { kubernetesRequestFloor } from './kubernetes-request-floor.mjs';
import { kubernetesSidecar } from './kubernetes-sidecar-memory.mjs';
import { defaultConcurrency, formatTable, machine, QUICK } from './lib.mjs';
import { rateLimit } from './rate-limit.mjs';
import { daemonTwoChecks } from './request-floor.mjs';
import { scale } from './scale.mjs';
import { startup } from './startup.mjs';
import { syscalls } from './syscalls.mjs';
import { generousLimit, throughput, throughputRows } from './throughput.mjs';

const SIZES = QUICK
  ? {
      throughput: { count: 20, latencyMs: 25, repeats: 1 },
      floor: { count: 5 },
      rateLimit: { limit: 10, windows: 1.5, latencyMs: 25, leadSeconds: 3, shiftClock: true },
      startup: { runs: 2, rssRuns: 1 },
      scale: { count: 200, due: 20 },
      memory: { count: 10, extra: 100, settleMs: 300, samples: 1, quietMs: 300 },
      heap: { count: 50, checks: 150, warmupMs: 500, sampleEveryMs: 1000 },
      sidecar: { settleMs: 1500, samples: 1 },
      syscalls: { count: 5 },
    }
  : {
      throughput: { count: 200, latencyMs: 25, repeats: 3 },
      floor: { count: 50 },
      rateLimit: { limit: 60, windows: 2.5, latencyMs: 25, leadSeconds: 8, shiftClock: false },
      startup: { runs: 9, rssRuns: 3 },
      scale: { count: 5000, due: 500 },
      // Idle: sampled 15 s after the last request, past V8's memory reducer (it runs about 8 s after
      // the last work and gives back what the first pass grew), as a daemon idles between checks.
      memory: { count: 100, extra: 900, settleMs: 15_000, samples: 3 },
      heap: { count: 100, checks: 10_000, warmupMs: 5000, sampleEveryMs: 10_000 },
      sidecar: { settleMs: 10_000, samples: 3, everyMs: 3000 },
      syscalls: { count: 200 },
    };

/** Every row the table must have, by part: a part that fails still shows its rows, as errors. */
const GOALS = {
  startup: [
    ['4a', '4 start-up: token-rotator --version'],
    ['4b', '4 start-up: token-rotator --help'],
    ['4c', '4 start-up: token-rotator validate'],
    ['4d', '4 start-up: peak RSS of --version'],
  ],
  throughput: [
    ['1a', '1 throughput: once vs minimal durable client'],
    ['1b', '1 throughput: once vs latency bound'],
    ['2a', '2 request floor: once'],
    ['3b', '3 rate limit generous: once'],
  ],
  floor: [
    ['2b', '2 request floor: daemon, 2 checks'],
    ['2c', '2 request floor: Kubernetes Secrets, one namespace'],
  ],
  ratelimit: [['3a', '3 rate limit: 429 after the first window']],
  scale: [
    ['6a', '6 scale: plan time'],
    ['6b', '6 scale: plan peak RSS'],
    ['6c', '6 scale: once time'],
  ],
  memory: [
    ['5a', '5 memory: idle daemon RSS, no NODE_OPTIONS'],
    ['5c', '5 memory: cost per 1,000 more tokens'],
    ['5d', "5 memory: idle daemon RSS with the image's NODE_OPTIONS"],
    ['5e', '5 memory: idle daemon RSS, 1,000 tokens'],
  ],
  heap: [['5b', '5 memory: live heap growth']],
  sidecar: [['x1', 'sidecar (1 token): Kubernetes idle RSS']],
  syscalls: [['x2', 'syscalls per rotation (strace -c -f)']],
};

const only = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',').map((s) => s.trim())) : undefined;
const wanted = (part) => !only || only.has(part);
const log = (text) => process.stderr.write(`bench: ${text}\n`);

const rows = [];
const failures = [];
async function part(name, measure) {
  if (!wanted(name)) return undefined;
  const started = performance.now();
  log(`${name}...`);
  try {
    const result = await measure();
    log(`${name} done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    return result;
  } catch (error) {
    log(`${name} FAILED: ${error?.stack ?? error}`);
    failures.push({ part: name, error: String(error?.message ?? error).slice(0, 2000) });
    const message = `ERROR: ${String(error?.message ?? error)
      .split('\n')[0]
      .slice(0, 60)}`;
    for (const [id, goal] of GOALS[name]) {
      if (!rows.some((r) => r.id === id)) rows.push({ id, goal, target: '', measured: message, baseline: '', result: 'error', value: NaN });
    }
    return undefined;
  }
}

const started = performance.now();
const info = machine();
const concurrency = defaultConcurrency();
log(`${QUICK ? 'quick' : 'full'} run on ${info.cpu}, ${info.cores} cores, node ${info.node}`);

await part('startup', async () => rows.push(...(await startup(SIZES.startup))));

let requestsPerToken = 2;
let baselineMs = NaN;
let floorMs = NaN;
await part('throughput', async () => {
  const t = await throughput({ ...SIZES.throughput, concurrency });
  rows.push(...throughputRows(t));
  const k = t.runs[0].kinds;
  if (t.runs[0].ok) requestsPerToken = (k.checkGet + k.verifyGet + k.post) / t.count;
  baselineMs = t.baseline.skipped ? NaN : t.baseline.ms;
  floorMs = t.floors.every((f) => f.ok) ? t.floorMs : NaN;
  rows.push(await generousLimit({ ...SIZES.throughput, concurrency, floorMs, baselineMs, requestsPerToken }));
});
await part('floor', async () => {
  rows.push(await daemonTwoChecks(SIZES.floor));
  rows.push(await kubernetesRequestFloor(SIZES.floor));
});
await part('scale', async () => rows.push(...(await scale(SIZES.scale))));
await part('memory', async () => rows.push(...(await daemonMemory(SIZES.memory))));
// The rate-limit run waits for the real clock's minute to be about to end and then spans two more
// windows; the heap run needs as long a time of steady checks. Both measure counts, not speed, so
// they share the wait.
await Promise.all([
  part('heap', async () => rows.push(await daemonHeap(SIZES.heap))),
  part('ratelimit', async () => rows.push(await rateLimit({ ...SIZES.rateLimit, requestsPerToken }))),
]);
await part('sidecar', async () => rows.push(await kubernetesSidecar(SIZES.sidecar)));
// Last: strace slows the runs it traces; they report counts, never time.
await part('syscalls', async () => rows.push(await syscalls(SIZES.syscalls)));

rows.sort((a, b) => a.id.localeCompare(b.id));
const seconds = (performance.now() - started) / 1000;

const out = process.stdout;
out.write(`\ntoken-rotator benchmark, issue 25${QUICK ? ' (BENCH_QUICK=1: small sizes, figures not comparable to the goals)' : ''}\n`);
out.write(
  `machine: ${info.cpu}, ${info.cores} cores, ${info.memoryGb} GB; node ${info.node}; ${info.os}; load ${info.loadavg.join(' ')} at start\n`,
);
out.write(`rotator concurrency for the bound: ${concurrency.value} (${concurrency.from})\n\n`);
out.write(formatTable(rows));
const tally = rows.reduce((t, r) => ({ ...t, [r.result]: (t[r.result] ?? 0) + 1 }), {});
out.write(
  `\n${Object.entries(tally)
    .map(([k, v]) => `${v} ${k}`)
    .join(', ')}; ${seconds.toFixed(0)} s in all\n`,
);
out.write('\nnotes:\n');
for (const row of rows) {
  if (!row.details) continue;
  const brief = Object.entries(row.details)
    .filter(([, v]) => v !== undefined && !(typeof v === 'string' && v.length > 300))
    .map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`)
    .join('; ');
  out.write(`  ${row.id}: ${brief}\n`);
}
if (failures.length) out.write(`\nfailed parts: ${failures.map((f) => `${f.part} (${f.error.split('\n')[0]})`).join('; ')}\n`);

if (process.env.BENCH_OUT) {
  await writeFile(
    process.env.BENCH_OUT,
    JSON.stringify({ quick: QUICK, at: new Date().toISOString(), seconds, machine: info, concurrency, goals: rows, failures }, null, 2) +
      '\n',
  );
  log(`results written to ${process.env.BENCH_OUT}`);
}

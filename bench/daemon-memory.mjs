// Goal 3 of issue 25 (5a/5e here), resident memory: a real daemon process (the built CLI) with N file-sink
// tokens configured, idle (hourly checks) after the first check of every token, against the in-process
// emulator, launched as users launch it (no NODE_OPTIONS); beside a bare Node process's; again with more
// tokens (1,000 in all) for that goal and the cost of each thousand; and once with the image's
// NODE_OPTIONS, stated. RSS is read from /proc (else the daemon's /metrics), a median of a few samples.
//   NODE_OPTIONS   for the image-shaped run (5d); default "--max-semi-space-size=1", as in the container image
// Part of npm run bench (bench/run.mjs); `node bench/daemon-memory.mjs` runs it alone.
import {
  childEnv,
  CLI,
  freePort,
  IMAGE_NODE_OPTIONS,
  mb,
  median,
  metricsOf,
  QUICK,
  rotatorFolder,
  rssOf,
  runStandalone,
  seedTokens,
  sleep,
  startCountedEmulator,
  startNode,
  waitFor,
} from './lib.mjs';

async function sampleRss(pid, port, samples, everyMs) {
  const values = [];
  for (let i = 0; i < samples; i++) {
    if (i > 0) await sleep(everyMs);
    values.push(rssOf(pid) ?? (await metricsOf(port))?.rss);
  }
  return values;
}

/** The idle RSS of a daemon with `count` tokens, after its first check of every one. */
export async function idleDaemon({ count, settleMs, samples, quietMs = 1000, nodeOptions = IMAGE_NODE_OPTIONS }) {
  const { emulator, counter } = await startCountedEmulator();
  // Not due, and not deployed: the first check delivers each (a fresh deployment), then all is idle.
  const tokens = seedTokens(emulator, count, { due: 0, prefix: 'idle' });
  const port = await freePort();
  const folder = await rotatorFolder(emulator, tokens, {
    defaults: { schedule: '0 * * * *' },
    env: { ROTATOR_LISTEN: `127.0.0.1:${port}`, ROTATOR_LOG_LEVEL: 'warn' },
  });
  const ids = new Set(tokens.map((t) => t.id));
  const env = childEnv(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {});
  const daemon = startNode([CLI, 'daemon', ...folder.args], { cwd: folder.dir, env });
  try {
    const checked = await waitFor(() => counter.classify(ids).checkGet >= count, 120_000);
    if (!checked) throw new Error(`the daemon did not check its ${count} tokens in 120 s\n${daemon.stderr()}`);
    // The first check is over when the emulator has heard nothing for a while.
    await waitFor(() => Date.now() - (counter.requests.at(-1)?.at ?? 0) > quietMs, 120_000);
    await sleep(settleMs);
    const rss = await sampleRss(daemon.child.pid, port, samples, 1000);
    const metrics = await metricsOf(port);
    return { count, rss: median(rss), samples: rss, heapUsed: metrics?.heap, requests: counter.classify(ids) };
  } finally {
    await daemon.stop();
    await emulator.close();
    await folder.remove();
  }
}

/** A bare Node process, idle, launched as the daemon of 5a is (no NODE_OPTIONS). */
export async function bareNode({ settleMs, samples }) {
  const node = startNode(['-e', 'setInterval(() => {}, 1 << 30)'], { env: childEnv() });
  try {
    await sleep(settleMs);
    return median(await sampleRss(node.child.pid, 0, samples, 500));
  } finally {
    await node.stop();
  }
}

const MB = 1024 * 1024;

export async function daemonMemory({ count = 100, extra = 900, settleMs = 5000, samples = 3, quietMs = 1000 } = {}) {
  const bare = await bareNode({ settleMs: Math.min(settleMs, 1500), samples });
  // As users launch it (npm start, systemd, by hand): no NODE_OPTIONS at all.
  const idle = await idleDaemon({ count, settleMs, samples, quietMs, nodeOptions: '' });
  const more = await idleDaemon({ count: count + extra, settleMs, samples, quietMs, nodeOptions: '' });
  const image = await idleDaemon({ count, settleMs, samples, quietMs, nodeOptions: IMAGE_NODE_OPTIONS });
  const perThousand = ((more.rss - idle.rss) / extra) * 1000;
  const heapPerThousand = ((more.heapUsed - idle.heapUsed) / extra) * 1000;
  return [
    {
      id: '5a',
      goal: `5 memory: idle daemon, ${count} file-sink tokens, RSS, no NODE_OPTIONS`,
      target: '≤ 85 MB',
      measured: `${mb(idle.rss)} MB`,
      baseline: `bare node idle: ${mb(bare)} MB`,
      result: idle.rss <= 85 * MB ? 'pass' : 'short',
      value: idle.rss / MB,
      unit: 'MB',
      details: {
        node: process.version,
        nodeOptions: 'none',
        samplesMB: idle.samples.map((s) => Number(mb(s))),
        heapUsedMB: Number(mb(idle.heapUsed)),
        bareNodeMB: Number(mb(bare)),
      },
    },
    {
      id: '5c',
      goal: `5 memory: cost per 1,000 more tokens (idle RSS)`,
      target: 'stated',
      measured: `${mb(perThousand)} MB RSS, ${Number.isFinite(heapPerThousand) ? mb(heapPerThousand) : '?'} MB heap`,
      baseline: `${count}: ${mb(idle.rss)} MB; ${count + extra}: ${mb(more.rss)} MB`,
      result: Number.isFinite(perThousand) ? 'stated' : 'n/a',
      value: perThousand / MB,
      unit: 'MB per 1,000 tokens',
      details: { heapUsedMB: { [count]: Number(mb(idle.heapUsed)), [count + extra]: Number(mb(more.heapUsed)) } },
    },
    {
      id: '5d',
      goal: `5 memory: idle daemon, ${count} file-sink tokens, RSS with the image's NODE_OPTIONS`,
      target: 'stated',
      measured: `${mb(image.rss)} MB`,
      baseline: `without NODE_OPTIONS: ${mb(idle.rss)} MB`,
      result: Number.isFinite(image.rss) ? 'stated' : 'n/a',
      value: image.rss / MB,
      unit: 'MB',
      details: {
        nodeOptions: IMAGE_NODE_OPTIONS,
        samplesMB: image.samples.map((s) => Number(mb(s))),
        heapUsedMB: Number(mb(image.heapUsed)),
      },
    },
    {
      id: '5e',
      goal: `5 memory: idle daemon, ${count + extra} file-sink tokens, RSS, no NODE_OPTIONS`,
      target: '≤ 120 MB',
      measured: `${mb(more.rss)} MB`,
      baseline: `${count} tokens: ${mb(idle.rss)} MB; bare node ${mb(bare)} MB`,
      result: more.rss <= 120 * MB ? 'pass' : 'short',
      value: more.rss / MB,
      unit: 'MB',
      details: { samplesMB: more.samples.map((s) => Number(mb(s))), heapUsedMB: Number(mb(more.heapUsed)) },
    },
  ];
}

await runStandalone(import.meta.url, () => daemonMemory(QUICK ? { count: 10, extra: 100, settleMs: 300, samples: 1, quietMs: 300 } : {}));

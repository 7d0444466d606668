// Row 3a (goal 5 of issue 25: no 429 after the first window), the limited half: `once` against the emulator's rate limit (a fixed one-minute
// window per client, answered with 429 and X-RateLimit-Limit/-Remaining/-Reset), with more work than
// two windows allow. The run starts a few seconds before a window ends, so the first window is
// spent at once; from the second window on, a rotator that reads the headers sends no request that
// the limit refuses. Counted from the emulator's own record of each API request and its answer.
import { childEnv, rotatorFolder, runCli, sec, seedTokens, sleep, startCountedEmulator } from './lib.mjs';
import { describeRequests } from './throughput.mjs';

const WINDOW_MS = 60_000;

/**
 * `limit` requests per minute; enough due tokens for `windows` windows' worth of requests at
 * `requestsPerToken` (measured by the throughput run: 2, or 3 with a verification GET).
 * `shiftClock`: instead of waiting for the real window to be about to end, start the emulator's
 * clock there (its Date header says so, and the rotator corrects for skew); for quick runs.
 */
export async function rateLimit({ limit, requestsPerToken, windows, latencyMs, leadSeconds, shiftClock }) {
  const count = Math.ceil((windows * limit) / requestsPerToken);
  const offset = { ms: 0 };
  const clock = { now: () => new Date(Date.now() + offset.ms) };
  const { emulator, counter } = await startCountedEmulator({ latencyMs, rateLimitPerMinute: limit, clock });
  const tokens = seedTokens(emulator, count, { prefix: 'limited' });
  const folder = await rotatorFolder(emulator, tokens);
  let run;
  try {
    const target = WINDOW_MS - leadSeconds * 1000;
    if (shiftClock) {
      offset.ms = target - (Date.now() % WINDOW_MS);
    } else {
      let wait = target - (Date.now() % WINDOW_MS);
      if (wait < 0) wait += WINDOW_MS;
      await sleep(wait);
    }
    run = await runCli(['once', ...folder.args], { cwd: folder.dir, env: childEnv(), timeoutMs: 240_000 });
  } finally {
    await emulator.close();
    await folder.remove();
  }
  const api = emulator.requests.map((r) => ({ at: Date.parse(r.at), status: r.status, op: r.op }));
  const firstWindow = api.length ? Math.floor(api[0].at / WINDOW_MS) : 0;
  const after = api.filter((r) => Math.floor(r.at / WINDOW_MS) > firstWindow);
  const limitedFirst = api.filter((r) => Math.floor(r.at / WINDOW_MS) === firstWindow && r.status === 429).length;
  const limitedAfter = after.filter((r) => r.status === 429).length;
  const rotated = api.filter((r) => r.op === 'regenerate' && r.status === 200).length;
  const ok = run.code === 0 && rotated === count;
  const perWindow = {};
  for (const r of api) {
    const w = Math.floor(r.at / WINDOW_MS) - firstWindow;
    perWindow[w] ??= { requests: 0, status429: 0 };
    perWindow[w].requests += 1;
    if (r.status === 429) perWindow[w].status429 += 1;
  }
  return {
    id: '3a',
    goal: `3 rate limit ${limit}/min: once, ${count} due`,
    target: '0 × 429 after the first window',
    measured: `${limitedAfter} × 429 after (${limitedFirst} in window 1); ${rotated}/${count} rotated in ${sec(run.ms)} s`,
    baseline: `${api.length - limitedFirst - limitedAfter} requests answered over ${Object.keys(perWindow).length} windows`,
    result: limitedAfter === 0 && ok ? 'pass' : 'short',
    value: limitedAfter,
    unit: '429s',
    details: {
      limitPerMinute: limit,
      tokens: count,
      exitCode: run.code,
      seconds: run.ms / 1000,
      perWindow,
      clock: shiftClock ? `emulator clock shifted ${offset.ms} ms` : 'real clock, started before a window boundary',
      requests: describeRequests(counter.classify(new Set(tokens.map((t) => t.id)))),
      stderrTail: ok ? undefined : run.stderr.slice(-1500),
    },
  };
}

// Shared by the benchmarks of npm run bench: the emulator with a count of every request it serves,
// the built CLI in child processes (wall time, peak RSS), policy and env files, and small statistics.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { createServer } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { stringify } from 'yaml';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const CLI = join(ROOT, 'dist/cli/main.js');
export const QUICK = process.env.BENCH_QUICK === '1';
/** NODE_OPTIONS of the daemons, as the container image sets it. */
export const IMAGE_NODE_OPTIONS = process.env.NODE_OPTIONS ?? '--max-semi-space-size=1';
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export const mb = (bytes) => (bytes / 1024 / 1024).toFixed(1);
export const sec = (ms) => (ms / 1000).toFixed(2);

/** The emulator's package (built by npm run build:all), loaded when a benchmark first needs it. */
const emulatorModule = () => import('token-rotator-emulator');

// ---------------------------------------------------------------------------------------------
// Every request an emulator serves, counted by its port. The emulator's server is a node:http
// server in this process; its emit is wrapped once, before any emulator starts.

const counters = new Map();
let installed = false;
function installCounter() {
  if (installed) return;
  installed = true;
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (event, req, res) {
    if (event === 'request') {
      const counter = counters.get(req.socket.localPort);
      if (counter) counter.observe(req, res);
    }
    return emit.apply(this, arguments);
  };
}

class RequestCounter {
  requests = [];
  inflight = 0;
  peakInflight = 0;
  connections = new WeakSet();
  connectionCount = 0;

  observe(req, res) {
    const path = (req.url ?? '/').split('?')[0];
    const entry = { method: req.method, path, at: Date.now(), status: 0, ua: String(req.headers['user-agent'] ?? '') };
    if (!this.connections.has(req.socket)) {
      this.connections.add(req.socket);
      this.connectionCount += 1;
    }
    this.requests.push(entry);
    const api = path.startsWith('/v2/');
    if (api) {
      this.inflight += 1;
      this.peakInflight = Math.max(this.peakInflight, this.inflight);
    }
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      entry.status = res.statusCode;
      entry.ms = Date.now() - entry.at;
      if (api) this.inflight -= 1;
    };
    res.once('finish', finish);
    res.once('close', finish);
  }

  reset() {
    this.requests = [];
    this.peakInflight = this.inflight;
    this.connectionCount = 0;
    this.connections = new WeakSet();
  }

  /**
   * The requests by kind. `initialIds` are the ids the policy names: a GET of another id is of a
   * token minted in this run (the verification GET after a rotation).
   */
  classify(initialIds) {
    const kinds = { checkGet: 0, verifyGet: 0, post: 0, oauthToken: 0, discovery: 0, internalJwks: 0, control: 0, other: 0, status429: 0 };
    const others = [];
    for (const r of this.requests) {
      const get = /^\/v2\/tokens\/([^/]+)$/.exec(r.path);
      if (r.status === 429) kinds.status429 += 1;
      if (get && r.method === 'GET') {
        if (initialIds.has(decodeURIComponent(get[1]))) kinds.checkGet += 1;
        else kinds.verifyGet += 1;
      } else if (r.method === 'POST' && /^\/v2\/tokens\/[^/]+\/regenerate$/.test(r.path)) kinds.post += 1;
      else if (r.method === 'POST' && r.path === '/oauth/token') kinds.oauthToken += 1;
      else if (r.path.startsWith('/oauth/.well-known/') || r.path.startsWith('/.well-known/')) kinds.discovery += 1;
      // The emulator's API fetches its own authorization server's keys (jose's user agent).
      else if (r.path === '/oauth/jwks' && r.ua.startsWith('jose/')) kinds.internalJwks += 1;
      else if (r.path.startsWith('/_emulator/')) kinds.control += 1;
      else {
        kinds.other += 1;
        others.push(`${r.method} ${r.path}`);
      }
    }
    return { ...kinds, others };
  }
}

/** The in-process emulator with a request counter. `options` as startEmulator's. */
export async function startCountedEmulator(options = {}) {
  installCounter();
  const { startEmulator } = await emulatorModule();
  const emulator = await startEmulator({ rateLimitPerMinute: 1_000_000_000, ...options });
  const port = Number(new URL(emulator.apiUrl).port);
  const counter = new RequestCounter();
  counters.set(port, counter);
  const close = emulator.close;
  emulator.close = async () => {
    counters.delete(port);
    await close();
  };
  return { emulator, counter };
}

/** `count` tokens in the emulator, `due` of them expiring within the default renewBefore (7d). */
export function seedTokens(emulator, count, { due = count, prefix = 'tok' } = {}) {
  const now = Date.now();
  return Array.from({ length: count }, (_, i) =>
    emulator.store.add({
      id: `${prefix}-${i}-id`,
      name: `${prefix}-${i}`,
      expiresAt: new Date(now + (i < due ? 2 : 60) * 86400_000),
    }),
  );
}

/**
 * A folder with a policy of file sinks (secrets/NAME.token) for `tokens`, and an env file for the
 * emulator's client (0600) with a state key. `deployed`: tokens whose sink already holds their
 * secret (adopted at the first run, as the demo does), so that they are not rotated as drift.
 */
export async function rotatorFolder(emulator, tokens, { defaults = {}, deployed = [], env = {}, prefix = 'token-rotator-bench-' } = {}) {
  const dir = await mkdtemp(join(os.tmpdir(), prefix));
  await writeFile(
    join(dir, 'rotation.yaml'),
    stringify({
      version: 1,
      ...(Object.keys(defaults).length ? { defaults } : {}),
      tokens: tokens.map((t) => ({ name: t.name, id: t.id, sinks: [{ type: 'file', path: `secrets/${t.name}.token` }] })),
    }),
  );
  if (deployed.length) {
    await mkdir(join(dir, 'secrets'), { recursive: true, mode: 0o700 });
    for (const t of deployed) await writeFile(join(dir, 'secrets', `${t.name}.token`), t.secret, { mode: 0o600 });
  }
  await writeEnvFile(join(dir, 'rotator.env'), {
    ...emulator.rotatorEnv(),
    ROTATOR_STATE_DIR: join(dir, 'state'),
    ROTATOR_STATE_KEY: randomBytes(32).toString('base64'),
    ...env,
  });
  return { dir, args: ['--config', 'rotation.yaml', '--dotenv', 'rotator.env'], remove: () => rm(dir, { recursive: true, force: true }) };
}

export async function writeEnvFile(file, env) {
  const { envFileText } = await emulatorModule();
  await writeFile(file, envFileText(env), { mode: 0o600 });
}

// ---------------------------------------------------------------------------------------------
// Child processes.

const TIME = '/usr/bin/time';
const HAS_TIME = (() => {
  try {
    return existsSync(TIME);
  } catch {
    return false;
  }
})();
const MAXRSS_PROBE = pathToFileURL(join(ROOT, 'bench/maxrss-probe.mjs')).href;

/** Only what a run needs: a developer's own ROTATOR_* variables must not leak in. */
export function childEnv(extra = {}) {
  return { PATH: process.env.PATH ?? '', ...extra };
}

/**
 * Runs `node ARGS` (the project's Node: process.execPath) and resolves with its exit code, output and
 * wall time from spawn to exit. `peakRss`: also its peak RSS, by /usr/bin/time when the machine has
 * it, else by a preloaded module reading process.resourceUsage() at exit. `cpu`: also its CPU time
 * (user + system, every thread), by /usr/bin/time only: wall time is noisy on a shared machine.
 * `wrapper`: a command line the node command is appended to (strace); no peak RSS or CPU then.
 */
export async function runNode(nodeArgs, { cwd = ROOT, env = childEnv(), peakRss = false, cpu = false, wrapper, timeoutMs = 600_000 } = {}) {
  let command = process.execPath;
  let args = nodeArgs;
  let rssFile;
  if (wrapper) {
    [command, ...args] = [...wrapper, process.execPath, ...nodeArgs];
  } else if (peakRss || (cpu && HAS_TIME)) {
    rssFile = join(os.tmpdir(), `token-rotator-bench-rss-${randomBytes(4).toString('hex')}`);
    if (HAS_TIME) {
      command = TIME;
      args = ['-f', '%U %S\n%M', '-o', rssFile, process.execPath, ...nodeArgs];
    } else {
      args = ['--import', MAXRSS_PROBE, ...nodeArgs];
      env = { ...env, BENCH_MAXRSS_OUT: rssFile };
    }
  }
  const started = performance.now();
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise((resolve) => child.on('close', (c, signal) => resolve(c ?? signal)));
  const ms = performance.now() - started;
  clearTimeout(timer);
  let peakRssBytes;
  let cpuMs;
  if (rssFile) {
    const text = await readFile(rssFile, 'utf8').catch(() => '');
    await rm(rssFile, { force: true });
    const lines = text.trim().split('\n');
    // Both write kilobytes: GNU time's %M and getrusage's ru_maxrss on Linux.
    const kb = Number(lines.at(-1));
    if (peakRss && Number.isFinite(kb) && kb > 0) peakRssBytes = kb * 1024;
    // GNU time's "%U %S" line (seconds), just before %M; it also reports a signal on a line of its own.
    const times = HAS_TIME ? lines.at(-2)?.split(' ').map(Number) : undefined;
    if (times?.length === 2 && times.every(Number.isFinite)) cpuMs = (times[0] + times[1]) * 1000;
  }
  return { code, stdout, stderr, ms, cpuMs, peakRssBytes, peakRssBy: peakRss ? (HAS_TIME ? '/usr/bin/time' : 'resourceUsage') : undefined };
}

export const runCli = (args, options) => runNode([CLI, ...args], options);

/** A long-running child (a daemon), with its pid for /proc. */
export function startNode(nodeArgs, { cwd = ROOT, env = childEnv() } = {}) {
  const child = spawn(process.execPath, nodeArgs, { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    // Keep the tail only: a busy daemon logs for minutes.
    stderr = (stderr + chunk).slice(-20_000);
  });
  const closed = new Promise((resolve) => child.on('close', (code, signal) => resolve(code ?? signal)));
  return {
    child,
    closed,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await closed;
      clearTimeout(timer);
    },
  };
}

/** Resident memory of a live process: /proc on Linux; undefined elsewhere. */
export function rssOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]);
    return Number.isFinite(kb) ? kb * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** A free-ish port for a daemon's listener. */
/**
 * A loopback port nothing listens on now: the OS's pick for port 0, taken and let go again (a
 * random number collided with a test's listener on a busy CI machine).
 */
export async function freePort() {
  const server = createServer();
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address();
  await new Promise((done) => server.close(done));
  return port;
}

/** Reads a daemon's /metrics; undefined while it does not answer. */
export async function metricsOf(port) {
  try {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const value = (name) =>
      Number(
        text
          .split('\n')
          .find((l) => l.startsWith(name + ' ') || l.startsWith(name + '{'))
          ?.split(' ')
          .pop() ?? NaN,
      );
    return { rss: value('process_resident_memory_bytes'), heap: value('nodejs_heap_size_used_bytes') };
  } catch {
    return undefined;
  }
}

/** Polls `predicate` every 50 ms until true or `timeoutMs`; resolves with whether it became true. */
export async function waitFor(predicate, timeoutMs) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await predicate()) return true;
    await sleep(50);
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Statistics and the machine.

export function median(values) {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (!sorted.length) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Least-squares slope of y over x. */
export function slope(points) {
  const n = points.length;
  if (n < 2) return NaN;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  const sxy = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  return sxx === 0 ? NaN : sxy / sxx;
}

export function machine() {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model?.trim() ?? 'unknown',
    cores: os.availableParallelism?.() ?? cpus.length,
    memoryGb: Number((os.totalmem() / 1024 ** 3).toFixed(1)),
    node: process.version,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    loadavg: os.loadavg().map((l) => Number(l.toFixed(2))),
  };
}

/**
 * The rotator's default concurrency, read from the source (src/config/env.ts), else from the build:
 * the bound of goal 1 is computed at the concurrency it uses. BENCH_CONCURRENCY overrides it.
 */
export function defaultConcurrency() {
  if (process.env.BENCH_CONCURRENCY) return { value: Number(process.env.BENCH_CONCURRENCY), from: 'BENCH_CONCURRENCY' };
  for (const file of ['src/config/env.ts', 'dist/config/env.js']) {
    try {
      const text = readFileSync(join(ROOT, file), 'utf8');
      const match = /['"]ROTATOR_CONCURRENCY['"]\s*,\s*(\d+)/.exec(text) ?? /DEFAULT_CONCURRENCY\s*=\s*(\d+)/.exec(text);
      if (match) return { value: Number(match[1]), from: file };
    } catch {
      // the next place
    }
  }
  return { value: 4, from: 'assumed (not found in src/config/env.ts)' };
}

// ---------------------------------------------------------------------------------------------
// The goal table.

export const COLUMNS = ['GOAL', 'TARGET', 'MEASURED', 'BASELINE', 'RESULT'];

/** Rows of {goal, target, measured, baseline, result} as an aligned text table. */
export function formatTable(rows) {
  const cells = [COLUMNS, ...rows.map((r) => [`${r.id} ${r.goal}`, r.target, r.measured, r.baseline, r.result])];
  const widths = COLUMNS.map((_, i) => Math.max(...cells.map((row) => String(row[i]).length)));
  const line = (row) =>
    row
      .map((cell, i) => String(cell).padEnd(widths[i]))
      .join(' | ')
      .trimEnd();
  return [line(cells[0]), widths.map((w) => '-'.repeat(w)).join('-|-'), ...cells.slice(1).map(line)].join('\n') + '\n';
}

/** For a benchmark file run by itself (node bench/NAME.mjs): its rows as a table. */
export async function runStandalone(metaUrl, measure) {
  if (!process.argv[1] || pathToFileURL(process.argv[1]).href !== metaUrl) return;
  const rows = [await measure()].flat();
  process.stdout.write(formatTable(rows));
  for (const row of rows) if (row.details) process.stdout.write(`${row.id}: ${JSON.stringify(row.details)}\n`);
}

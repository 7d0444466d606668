// The floor of goal 1 (issue 25): a minimal durable client on node:http doing exactly the work a
// durable rotation needs, and nothing else. Once per run: discovery and one client-credentials token
// request (the rotator's request floor). Per token, 16 at a time on one keep-alive agent:
//   GET the token; if due (expiry within 7 days, as the curl+jq script decides) POST a regenerate;
//   journal the secret (one JSON line appended to journal.log, acknowledged by an fdatasync that
//   began after the append: a group commit, as src/fs/folder-sync.ts shares folder syncs);
//   write the sink (secrets/NAME.token.tmp 0600, write, fsync, close, rename, then the folder's fsync,
//   shared the same way: it is what makes the rename durable, and the rotator pays it too);
//   GET the new id; journal the commit (append, group fdatasync).
// No retries, no locks, no state beyond the journal: a lower bound for a client that loses no secret
// on a crash, not a tool.
//
// `floorClientRun` runs it in a child process (as `once` runs) against a fresh counted emulator.
// Run directly, `node bench/floor-client.mjs TOKENS_FILE DIR` (TOKENS_FILE: "name id" per line;
// environment: ROTATOR_API_URL ROTATOR_OAUTH_ISSUER ROTATOR_OAUTH_CLIENT_ID ROTATOR_OAUTH_CLIENT_SECRET;
// BENCH_FLOOR_CONCURRENCY, default 16) does the rotations and prints {rotated, delivered, syncs} as JSON.
import { fdatasync, fsync } from 'node:fs';
import { mkdir, mkdtemp, open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const SCRIPT = fileURLToPath(import.meta.url);
const RENEW_BEFORE_MS = 7 * 86400_000;

/**
 * A sync of `fd` shared by concurrent callers: each call resolves only after a sync that began after
 * the call, so whatever the caller appended before calling is covered; callers that ask while one is
 * under way share the next one.
 */
function groupSync(fd, syncCall) {
  const state = { running: undefined, next: undefined, count: 0 };
  const once = () => new Promise((resolve, reject) => syncCall(fd, (error) => (error ? reject(error) : resolve())));
  function sync() {
    if (!state.running) {
      state.count += 1;
      state.running = once().finally(() => (state.running = undefined));
      return state.running;
    }
    state.next ??= state.running
      .catch(() => undefined)
      .then(() => {
        state.next = undefined;
        return sync();
      });
    return state.next;
  }
  return { sync, count: () => state.count };
}

/** JSON over one keep-alive agent; rejects on any status but 200 (no retries: a floor). */
function requester(agent) {
  return (url, { method = 'GET', headers = {}, body } = {}) =>
    new Promise((resolve, reject) => {
      const req = http.request(
        url,
        { method, agent, headers: body ? { ...headers, 'content-length': Buffer.byteLength(body) } : headers },
        (res) => {
          const chunks = [];
          res.on('data', (chunk) => chunks.push(chunk));
          res.on('end', () => {
            if (res.statusCode !== 200) reject(new Error(`${method} ${new URL(url).pathname}: ${res.statusCode}`));
            else resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
}

/** The rotations of `tokens` ({name, id}) into `dir`; resolves with what was done. */
export async function floorClient({ env, tokens, dir, concurrency = 16 }) {
  // The rotator's pool settings (src/api/token-service-client.ts): on Node >= 24.7 the agent takes 1 s
  // off the server's keep-alive hint by default, and the emulator hints 1 s: no socket would be reused.
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency, agentKeepAliveTimeoutBuffer: 250, scheduling: 'lifo' });
  const request = requester(agent);
  const secrets = join(dir, 'secrets');
  await mkdir(secrets, { recursive: true, mode: 0o700 });
  const journal = await open(join(dir, 'journal.log'), 'a', 0o600);
  const folder = await open(secrets, 'r');
  const journalSync = groupSync(journal.fd, fdatasync);
  const folderSync = groupSync(folder.fd, fsync);
  const append = async (entry) => {
    await journal.write(JSON.stringify(entry) + '\n');
    await journalSync.sync();
  };
  let rotated = 0;
  let delivered = 0;
  try {
    const { token_endpoint: tokenEndpoint } = await request(`${env.ROTATOR_OAUTH_ISSUER}/.well-known/openid-configuration`);
    const basic = Buffer.from(
      `${encodeURIComponent(env.ROTATOR_OAUTH_CLIENT_ID)}:${encodeURIComponent(env.ROTATOR_OAUTH_CLIENT_SECRET ?? '')}`,
    ).toString('base64');
    const { access_token: accessToken } = await request(tokenEndpoint, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    const auth = { authorization: `Bearer ${accessToken}` };
    const api = (path) => `${env.ROTATOR_API_URL}/v2/tokens/${path}`;

    async function rotate({ name, id }) {
      const token = await request(api(encodeURIComponent(id)), { headers: auth });
      const now = Date.now();
      const expires = token.expiresAt === null || token.expiresAt === undefined ? NaN : Date.parse(token.expiresAt);
      if (!(expires - now < RENEW_BEFORE_MS)) return;
      const fresh = await request(api(`${encodeURIComponent(id)}/regenerate`), {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({
          existingTokenExpiresAt: new Date(Math.min(expires, now + 3600_000)).toISOString(),
          newTokenExpiresAt: new Date(now + 30 * 86400_000).toISOString(),
        }),
      });
      rotated += 1;
      await append({ name, newId: fresh.id, secret: fresh.token });
      const tmp = join(secrets, `${name}.token.tmp`);
      const sink = await open(tmp, 'wx', 0o600);
      try {
        await sink.write(fresh.token);
        await sink.sync();
      } finally {
        await sink.close();
      }
      await rename(tmp, join(secrets, `${name}.token`));
      await folderSync.sync();
      delivered += 1;
      await request(api(encodeURIComponent(fresh.id)), { headers: auth });
      await append({ name, commit: fresh.id });
    }

    let next = 0;
    const worker = async () => {
      while (next < tokens.length) await rotate(tokens[next++]);
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, tokens.length) }, worker));
  } finally {
    agent.destroy();
    await journal.close();
    await folder.close();
  }
  return { rotated, delivered, syncs: { journal: journalSync.count(), folder: folderSync.count() } };
}

/** The command line a child runs: `node bench/floor-client.mjs TOKENS_FILE DIR`. */
export const floorClientArgs = (tokensFile, dir) => [SCRIPT, tokensFile, dir];

/** Writes the tokens file a child reads, in `dir`; returns the child's arguments. */
export async function floorClientFolder(tokens, prefix = 'token-rotator-floor-') {
  const dir = await mkdtemp(join(os.tmpdir(), prefix));
  const file = join(dir, 'tokens');
  await writeFile(file, tokens.map((t) => `${t.name} ${t.id}`).join('\n') + '\n');
  return { dir, args: floorClientArgs(file, join(dir, 'out')), remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * One floor-client run over `count` due tokens against a fresh counted emulator, in a child process
 * (spawn to exit, as `once` is timed). `inspect(out, emulator)` may look at the folder before it goes.
 */
export async function floorClientRun({ count, latencyMs, concurrency = 16, inspect }) {
  // Imported here, not at the top: the child that does the rotations loads node's modules only.
  const { childEnv, runNode, seedTokens, startCountedEmulator } = await import('./lib.mjs');
  const { emulator, counter } = await startCountedEmulator({ latencyMs });
  const tokens = seedTokens(emulator, count);
  const folder = await floorClientFolder(tokens);
  try {
    const run = await runNode(folder.args, {
      env: childEnv({ ...emulator.rotatorEnv(), BENCH_FLOOR_CONCURRENCY: String(concurrency) }),
      cpu: true,
    });
    let report = {};
    try {
      report = JSON.parse(run.stdout);
    } catch {
      // reported as not ok below
    }
    const out = join(folder.dir, 'out');
    const delivered = (await readdir(join(out, 'secrets')).catch(() => [])).filter((f) => f.endsWith('.token')).length;
    const rotated = emulator.requests.filter((r) => r.op === 'regenerate' && r.status === 200).length;
    if (inspect) await inspect(out, emulator);
    return {
      ms: run.ms,
      cpuMs: run.cpuMs,
      code: run.code,
      ok: run.code === 0 && rotated === count && delivered === count && report.delivered === count,
      stderrTail: run.code === 0 ? undefined : run.stderr.slice(-2000),
      count,
      rotated,
      delivered,
      syncs: report.syncs,
      kinds: counter.classify(new Set(tokens.map((t) => t.id))),
      peakInflight: counter.peakInflight,
      connections: counter.connectionCount,
    };
  } finally {
    await emulator.close();
    await folder.remove();
  }
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  const [tokensFile, dir] = process.argv.slice(2);
  const tokens = (await readFile(tokensFile, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [name, id] = line.split(' ');
      return { name, id };
    });
  const concurrency = Number(process.env.BENCH_FLOOR_CONCURRENCY ?? 16);
  const result = await floorClient({ env: process.env, tokens, dir, concurrency });
  process.stdout.write(JSON.stringify(result) + '\n');
}

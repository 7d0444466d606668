import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it, vi } from 'vitest';

import { readStateFiles, seedSink, startCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { freePort } from '../helpers/free-port.js';

const DAY = 24 * 3600_000;
// A real daemon per test, and waits that poll for what it does: bounds for a loaded machine, not an idle one.
vi.setConfig({ testTimeout: 90_000 });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function eventually<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 25_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

function metric(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(' ').pop()) : undefined;
}

describe('token-rotator daemon (a real process)', () => {
  let port = 0;
  const fx = useCliFixture({
    env: async () => {
      port = await freePort();
      return { ROTATOR_LISTEN: `127.0.0.1:${port}` };
    },
  });

  const base = () => `http://127.0.0.1:${port}`;
  const get = async (path: string) => {
    const response = await fetch(`${base()}${path}`);
    return { status: response.status, text: await response.text() };
  };
  function daemon() {
    const started = startCli(['daemon', '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir });
    void started.done.then((r) => fx.results.push(r));
    return started;
  }

  it('checks at start and on a seconds-level schedule, and its metrics follow a rotation', async () => {
    const steady = fx.emulator.store.add({ name: 'steady', expiresAt: new Date(Date.now() + 60 * DAY) });
    await seedSink(fx.dir, 'secrets/steady.token', steady.secret);
    await writePolicy(fx.dir, {
      version: 1,
      defaults: { schedule: '*/1 * * * * *' },
      tokens: [{ name: 'steady', id: steady.id, sinks: [{ type: 'file', path: 'secrets/steady.token' }] }],
    });
    const { child, done } = daemon();

    expect(await eventually(async () => ((await get('/healthz')).status === 200 ? true : undefined), 'healthz')).toBe(true);
    const ready = await eventually(
      async () => ((await get('/readyz')).status === 200 ? (await get('/readyz')).text : undefined),
      'readiness',
    );
    expect(ready).toMatch(/policy loaded \(1 token\); the token service answered/);

    // readiness comes with the first answer; the check's outcome reaches the metrics a moment later
    let metrics = await eventually(async () => {
      const text = (await get('/metrics')).text;
      return metric(text, 'token_rotator_token_expiry_timestamp_seconds', 'token="steady"') === undefined ? undefined : text;
    }, 'the first check in the metrics');
    expect(metric(metrics, 'token_rotator_token_expiry_timestamp_seconds', 'token="steady"')).toBeCloseTo(
      steady.expiresAt!.getTime() / 1000,
      0,
    );
    // every per-token counter is there from the start, at 0
    expect(metric(metrics, 'token_rotator_rotations_total', 'token="steady",result="success"')).toBe(0);
    expect(metric(metrics, 'token_rotator_next_check_timestamp_seconds', 'token="steady"')).toBeGreaterThan(Date.now() / 1000 - 2);
    expect(metrics).toContain('process_resident_memory_bytes');

    // the token is cut short behind the daemon's back: the next scheduled check rotates it
    fx.emulator.store.get(steady.id)!.expiresAt = new Date(Date.now() + DAY);
    metrics = await eventually(async () => {
      const text = (await get('/metrics')).text;
      return metric(text, 'token_rotator_rotations_total', 'token="steady",result="success"') === 1 ? text : undefined;
    }, 'a rotation in the metrics');
    expect(metric(metrics, 'token_rotator_token_expiry_timestamp_seconds', 'token="steady"')).toBeGreaterThan(
      Date.now() / 1000 + 29 * 86400,
    );
    expect(metric(metrics, 'token_rotator_sink_writes_total', 'token="steady",sink="file secrets/steady.token",result="updated"')).toBe(1);
    expect(metric(metrics, 'token_rotator_api_requests_total', 'op="regenerate",status="200"')).toBe(1);
    expect(metric(metrics, 'token_rotator_pending_deliveries', 'token="steady"')).toBe(0);
    const checks = fx.emulator.requests.filter((r) => r.op === 'retrieve').length;
    expect(checks).toBeGreaterThanOrEqual(2);

    child.kill('SIGTERM');
    const result = await done;
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/"msg":"stopped"/);
  });

  it('counts drift, and shows a sink left without its secret (onDrift: report) until it holds it again', async () => {
    const kept = fx.emulator.store.add({ name: 'kept', expiresAt: new Date(Date.now() + 60 * DAY) });
    await seedSink(fx.dir, 'secrets/kept.token', kept.secret);
    await writePolicy(fx.dir, {
      version: 1,
      defaults: { schedule: '*/1 * * * * *', onDrift: 'report' },
      tokens: [{ name: 'kept', id: kept.id, sinks: [{ type: 'file', path: 'secrets/kept.token' }] }],
    });
    const { child, done } = daemon();
    const labels = 'token="kept",sink="file secrets/kept.token"';
    // Its first check done (the name recorded, the sink adopted), so that what follows is drift and not a first delivery.
    await eventually(
      async () => (Object.keys(await readStateFiles(fx.dir)).some((path) => path.includes('tokens/')) ? true : undefined),
      'the first check to record the name',
      30_000,
    );
    await rm(join(fx.dir, 'secrets/kept.token'));
    const drifted = await eventually(async () => {
      const text = (await get('/metrics')).text;
      return metric(text, 'token_rotator_sink_drift', labels) === 1 ? text : undefined;
    }, 'the drift in the metrics');
    expect(metric(drifted, 'token_rotator_sink_drift_detected_total', `${labels},kind="missing"`)).toBeGreaterThanOrEqual(1);
    expect(fx.emulator.requests.filter((r) => r.op === 'regenerate')).toEqual([]);

    await seedSink(fx.dir, 'secrets/kept.token', kept.secret);
    await eventually(
      async () => (metric((await get('/metrics')).text, 'token_rotator_sink_drift', labels) === 0 ? true : undefined),
      'the repair',
    );
    child.kill('SIGTERM');
    expect((await done).code).toBe(0);
  }, 60_000);

  it('on SIGTERM in the middle of a rotation, finishes it: the secret is delivered, then it exits 0', async () => {
    const token = fx.emulator.store.add({ name: 'busy', expiresAt: new Date(Date.now() + DAY) });
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [{ name: 'busy', id: token.id, sinks: [{ type: 'file', path: 'secrets/busy.token' }] }],
    });
    fx.emulator.faults.add({ op: 'regenerate', action: { kind: 'hang', ms: 1500, commit: true } });
    const { child, done } = daemon();
    await eventually(async () => (fx.emulator.requests.some((r) => r.op === 'regenerate') ? true : undefined), 'the regenerate to be sent');
    child.kill('SIGTERM');
    // No wall-clock bound: the stop's own 8 s deadline and the test's timeout bound it.
    const result = await done;
    expect(result.code).toBe(0);
    const secret = await readFile(join(fx.dir, 'secrets/busy.token'), 'utf8');
    expect(fx.emulator.store.bySecret(secret)?.name).toBe('busy');
    expect(fx.emulator.requests.filter((r) => r.op === 'regenerate')).toHaveLength(1);
  });

  it('SIGHUP reloads the policy, and keeps the running one when the new one is invalid', async () => {
    const first = fx.emulator.store.add({ name: 'first', expiresAt: new Date(Date.now() + 60 * DAY) });
    const second = fx.emulator.store.add({ name: 'second', expiresAt: new Date(Date.now() + 60 * DAY) });
    const tokens = [{ name: 'first', id: first.id, sinks: [{ type: 'file', path: 'secrets/first.token' }] }];
    await writePolicy(fx.dir, { version: 1, tokens });
    const { child, done } = daemon();
    await eventually(async () => ((await get('/readyz')).status === 200 ? true : undefined), 'readiness');

    await writeFile(join(fx.dir, 'rotation.yaml'), 'version: 2\n');
    child.kill('SIGHUP');
    await sleep(500);
    expect((await get('/readyz')).text).toMatch(/\(1 token\)/);

    await writePolicy(fx.dir, {
      version: 1,
      tokens: [...tokens, { name: 'second', id: second.id, sinks: [{ type: 'file', path: 'secrets/second.token' }] }],
    });
    child.kill('SIGHUP');
    await eventually(async () => ((await get('/readyz')).text.includes('(2 tokens)') ? true : undefined), 'the reload');

    child.kill('SIGINT');
    const result = await done;
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/"msg":"the new policy is invalid; keeping the one in force"/);
    expect(result.stderr).toMatch(/"tokens":2,"msg":"policy reloaded"/);
  });

  it('SIGHUP refuses a policy that validate refuses, not only one that does not parse', async () => {
    const kept = fx.emulator.store.add({ name: 'kept', expiresAt: new Date(Date.now() + 60 * DAY) });
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [{ name: 'kept', id: kept.id, sinks: [{ type: 'file', path: 'secrets/kept.token' }] }],
    });
    const { child, done } = daemon();
    await eventually(async () => ((await get('/readyz')).status === 200 ? true : undefined), 'readiness');

    // Well-formed, but its sink would write into the state folder: validate says exit 2.
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [{ name: 'kept', id: kept.id, sinks: [{ type: 'file', path: 'state/tokens/kept.json' }] }],
    });
    child.kill('SIGHUP');
    await sleep(500);
    child.kill('SIGINT');
    const result = await done;
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/writes inside the state folder.*"msg":"the new policy is invalid; keeping the one in force"/);
    expect(result.stderr).not.toMatch(/"msg":"policy reloaded"/);
  });

  it('an unfinished rotation of a name no longer in the policy is logged, counted as pending, and keeps it unready', async () => {
    await mkdir(join(fx.dir, 'state/journal'), { recursive: true });
    const at = new Date().toISOString();
    await writeFile(
      join(fx.dir, 'state/journal/gone.json'),
      JSON.stringify({
        version: 1,
        name: 'gone',
        phase: 'intent',
        reason: 'r',
        startedAt: at,
        oldId: 'g1',
        oldExpiresAt: at,
        existingTokenExpiresAt: at,
        newTokenExpiresAt: null,
        delivered: [],
      }),
    );
    const present = fx.emulator.store.add({ name: 'present', expiresAt: new Date(Date.now() + 60 * DAY) });
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [{ name: 'present', id: present.id, sinks: [{ type: 'file', path: 'secrets/present.token' }] }],
    });
    const { child, done } = daemon();
    const ready = await eventually(async () => {
      const answer = await get('/readyz').catch(() => undefined);
      return answer && fx.emulator.requests.length > 0 ? answer : undefined;
    }, 'the first check');
    expect(ready.status).toBe(503);
    expect(ready.text).toMatch(/an unfinished rotation of 'gone' is in .*gone\.json, but 'gone' is no longer in the policy/);
    expect(metric((await get('/metrics')).text, 'token_rotator_pending_deliveries', 'token="gone"')).toBe(1);
    child.kill('SIGTERM');
    const result = await done;
    expect(result.stderr).toMatch(/"tokenName":"gone".*an unfinished rotation of 'gone'/);
  });

  it('reports a listen address it cannot use', async () => {
    await writePolicy(fx.dir, { version: 1, tokens: [] });
    const { done } = startCli(['daemon', '--config', 'rotation.yaml', '--dotenv', fx.envFile, '--listen', 'nowhere'], { cwd: fx.dir });
    const result = await done;
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--listen: 'nowhere' is not HOST:PORT");
  });
});

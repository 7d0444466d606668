import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { type CliResult, runCli, seedSink, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { expectNoLeak } from '../helpers/leaks.js';
import { itemsOf } from '../helpers/output-items.js';
import { startRecorder } from '../helpers/recorder.js';
import { startSignedWebhookReceiver, verifyTokenRotatorWebhook } from '../helpers/signed-webhook-receiver.js';

const DAY = 24 * 3600_000;
const inDays = (d: number) => new Date(Date.now() + d * DAY);
const HMAC_KEY = 'reload-hmac-key-canary-7f3a';

type Recorder = Awaited<ReturnType<typeof startRecorder>>;
let hook: Recorder;
let failing: Recorder;
let elsewhere: Recorder;
let redirecting: Recorder;
let signed: Awaited<ReturnType<typeof startSignedWebhookReceiver>>;
/** How far the signed receiver's clock is ahead of this machine's, in seconds. */
let receiverAhead = 0;

beforeAll(async () => {
  signed = await startSignedWebhookReceiver(HMAC_KEY, { nowSeconds: () => Math.floor(Date.now() / 1000) + receiverAhead });
  hook = await startRecorder((_req, res) => res.writeHead(204).end());
  failing = await startRecorder((_req, res) => res.writeHead(503).end());
  elsewhere = await startRecorder();
  redirecting = await startRecorder((_req, res) => res.writeHead(307, { location: `${elsewhere.url}/stolen` }).end());
});
afterAll(async () => {
  await Promise.all([hook, failing, elsewhere, redirecting, signed].map((r) => r.close()));
});

describe('webhook reload after a rotation', () => {
  const fx = useCliFixture({
    env: () => ({
      RELOAD_URL: `${hook.url}/reload`,
      RELOAD_HMAC: HMAC_KEY,
      FAILING_URL: `${failing.url}/reload`,
      REDIRECTING_URL: `${redirecting.url}/reload`,
      SIGNED_URL: `${signed.url}/reload`,
    }),
  });
  beforeEach(() => {
    for (const r of [hook, failing, elsewhere, redirecting, signed]) r.calls.length = 0;
    receiverAhead = 0;
  });

  async function cli(...args: string[]): Promise<CliResult> {
    const result = await runCli([...args, '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir });
    fx.results.push(result);
    return result;
  }

  it('posts each committed rotation once, signed, with the new id and never the secret; a second run posts nothing', async () => {
    const due = fx.emulator.store.add({ name: 'due', expiresAt: inDays(2) });
    const fine = fx.emulator.store.add({ name: 'fine', expiresAt: inDays(60) });
    await seedSink(fx.dir, 'fine.token', fine.secret);
    await writePolicy(fx.dir, {
      version: 1,
      defaults: { reload: [{ type: 'webhook', urlFrom: 'RELOAD_URL', secretFrom: 'RELOAD_HMAC' }] },
      tokens: [
        { name: 'due', id: due.id, sinks: [{ type: 'file', path: 'due.token' }] },
        { name: 'fine', id: fine.id, sinks: [{ type: 'file', path: 'fine.token' }] },
      ],
    });

    const first = await cli('once', '--json');
    expect(first.code, first.stderr).toBe(0);
    const [rotated] = itemsOf(first.stdout) as Array<{ newId: string; rotationId: string; reloads: unknown[] }>;
    expect(rotated!.reloads).toEqual([{ target: 'webhook RELOAD_URL', result: 'notified' }]);

    expect(hook.calls).toHaveLength(1);
    const call = hook.calls[0]!;
    expect(call.method).toBe('POST');
    expect(call.url).toBe('/reload');
    const body = JSON.parse(call.body) as Record<string, unknown>;
    expect(body).toEqual({
      event: 'rotated',
      token: 'due',
      id: rotated!.newId,
      expiresAt: expect.any(String),
      rotationId: rotated!.rotationId,
      rotatedAt: expect.any(String),
    });
    // A receiver checks the signature over the time and the exact bytes with the shared key.
    expect(verifyTokenRotatorWebhook(call.headers, Buffer.from(call.body), HMAC_KEY)).toBe(true);
    const delivered = await readFile(join(fx.dir, 'due.token'), 'utf8');
    expect(call.body).not.toContain(delivered);

    const second = await cli('once');
    expect(second.code, second.stderr).toBe(0);
    expect(hook.calls).toHaveLength(1);
    expectNoLeak({ hook: JSON.stringify(hook.calls.map((c) => ({ ...c, headers: {} }))) }, [HMAC_KEY, delivered]);
    for (const r of fx.results) expect(r.stdout + r.stderr).not.toContain(HMAC_KEY);
  });

  it('signs the time with the body: a receiver that checks both, as the README says, takes the delivery and refuses it replayed after 5 minutes, re-dated, or with another body', async () => {
    const due = fx.emulator.store.add({ name: 'signed', expiresAt: inDays(2) });
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [
        {
          name: 'signed',
          id: due.id,
          sinks: [{ type: 'file', path: 'signed.token' }],
          reload: [{ type: 'webhook', urlFrom: 'SIGNED_URL', secretFrom: 'RELOAD_HMAC' }],
        },
      ],
    });
    const result = await cli('once', '--json');
    expect(result.code, result.stderr).toBe(0);
    expect(itemsOf(result.stdout)[0].reloads).toEqual([{ target: 'webhook SIGNED_URL', result: 'notified' }]);
    expect(signed.calls.map((c) => c.accepted)).toEqual([true]);
    const captured = signed.calls[0]!;

    // The captured request, sent again as it is within the 5 minutes, is taken (receivers drop a
    // repeated rotationId): so the refusals below are the changes', not the replay's.
    expect(await signed.replay(captured)).toBe(204);
    const otherBody = captured.body.toString().replace('"token":"signed"', '"token":"other"');
    expect(otherBody).not.toBe(captured.body.toString());
    expect(await signed.replay(captured, { body: otherBody })).toBe(401);

    // Later than 5 minutes after it was signed: refused as it is, and refused with its timestamp
    // moved to now, as the signature covers the time.
    receiverAhead = 301;
    expect(await signed.replay(captured)).toBe(401);
    const now = String(Math.floor(Date.now() / 1000) + receiverAhead);
    expect(await signed.replay(captured, { headers: { 'x-token-rotator-timestamp': now } })).toBe(401);
    for (const r of fx.results) expect(r.stdout + r.stderr).not.toContain(HMAC_KEY);
  });

  it('reports a failed reload (exit 1, the table, the log) and keeps the rotation; the next run neither rotates nor posts again', async () => {
    const due = fx.emulator.store.add({ name: 'hooked', expiresAt: inDays(2) });
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [
        {
          name: 'hooked',
          id: due.id,
          sinks: [{ type: 'file', path: 'hooked.token' }],
          reload: [{ type: 'webhook', urlFrom: 'FAILING_URL' }],
        },
      ],
    });
    const first = await cli('once');
    expect(first.code).toBe(1);
    expect(first.stdout).toMatch(/hooked\s+webhook FAILING_URL\s+failed\s+answered 503/);
    expect(first.stderr).toContain('reload failed; the rotation stands and is not repeated');
    expect(first.stderr).not.toContain(failing.url);
    expect(failing.calls.length).toBeGreaterThan(1); // retried, as a 503 invites
    const newSecret = await readFile(join(fx.dir, 'hooked.token'), 'utf8');
    expect(newSecret).not.toBe(due.secret);

    const calls = failing.calls.length;
    const regenerates = () => fx.emulator.requests.filter((r) => r.op === 'regenerate').length;
    const before = regenerates();
    const second = await cli('once', '--json');
    expect(second.code, second.stderr).toBe(0);
    expect(itemsOf(second.stdout)[0]).toMatchObject({ name: 'hooked', action: 'skip' });
    expect(regenerates()).toBe(before);
    expect(failing.calls.length).toBe(calls);
  });

  it('never follows a reload hook redirect to another origin', async () => {
    const due = fx.emulator.store.add({ name: 'redirected', expiresAt: inDays(2) });
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [
        {
          name: 'redirected',
          id: due.id,
          sinks: [{ type: 'file', path: 'r.token' }],
          reload: [{ type: 'webhook', urlFrom: 'REDIRECTING_URL' }],
        },
      ],
    });
    const result = await cli('once', '--json');
    expect(result.code).toBe(1);
    expect(itemsOf(result.stdout)[0].reloads).toEqual([
      {
        target: 'webhook REDIRECTING_URL',
        result: 'failed',
        message: 'answered a redirect (307) to another origin, which is never followed',
      },
    ]);
    expect(elsewhere.calls).toEqual([]);
  });

  it('refuses, before any network call, a reload whose URL or key is missing or whose URL is plain http elsewhere', async () => {
    await writePolicy(fx.dir, {
      version: 1,
      defaults: { reload: [{ type: 'webhook', urlFrom: 'NOPE_URL', secretFrom: 'NOPE_KEY' }] },
      tokens: [
        { name: 'a', id: 'a1', sinks: [{ type: 'file', path: 'a.token' }] },
        { name: 'b', id: 'b1', sinks: [{ type: 'file', path: 'b.token' }] },
        { name: 'c', id: 'c1', sinks: [{ type: 'file', path: 'c.token' }], reload: [{ type: 'webhook', urlFrom: 'PLAIN_URL' }] },
      ],
    });
    fx.emulator.requests.length = 0;
    const result = await runCli(['once', '--config', 'rotation.yaml', '--dotenv', fx.envFile], {
      cwd: fx.dir,
      env: { PLAIN_URL: 'http://hooks.example.com/x' },
    });
    fx.results.push(result);
    expect(result.code).toBe(2);
    // A reload in defaults is one problem, not one per token.
    expect(result.stderr.match(/defaults\.reload\[0\]\.urlFrom/g)).toHaveLength(1);
    expect(result.stderr).toContain('defaults.reload[0].urlFrom: NOPE_URL (or NOPE_URL_FILE) is not set');
    expect(result.stderr).toContain('defaults.reload[0].secretFrom: NOPE_KEY (or NOPE_KEY_FILE) is not set');
    expect(result.stderr).toContain('tokens[2].reload[0].urlFrom: PLAIN_URL must be an https:// URL (plain http only on loopback)');
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(fx.emulator.requests).toHaveLength(0);
  });
});

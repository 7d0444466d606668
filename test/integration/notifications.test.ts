import { rm, unlink } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';

import { type Emulator, startEmulator } from 'token-rotator-emulator';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { emulatorSecrets, leakCheckedOutputs, runCli, writeEmulatorEnv, writePolicy } from '../helpers/cli.js';
import { expectNoLeak } from '../helpers/leaks.js';
import { startRecorder } from '../helpers/recorder.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let emulator: Emulator;
let receiver: Server;
let receiverUrl: string;
const received: Array<{ path: string; body: Record<string, unknown> }> = [];
let failNext = 0;

beforeAll(async () => {
  emulator = await startEmulator();
  receiver = createServer((req, res) => {
    let text = '';
    req.on('data', (c) => (text += String(c)));
    req.on('end', () => {
      if (failNext > 0) {
        failNext -= 1;
        res.writeHead(500).end();
        return;
      }
      received.push({ path: req.url ?? '', body: JSON.parse(text) as Record<string, unknown> });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
});
afterAll(async () => {
  await emulator.close();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

it('posts failures and orphans to a generic webhook and to Slack, success only where asked, retried, with nothing secret', async () => {
  const dir = await makeTempDir();
  const env = await writeEmulatorEnv(emulator, dir, { HOOK_URL: `${receiverUrl}/generic`, SLACK_URL: `${receiverUrl}/slack` });
  const refused = emulator.store.add({ name: 'refused', expiresAt: new Date(Date.now() + 86400_000) });
  const orphaned = emulator.store.add({ name: 'orphaned', expiresAt: new Date(Date.now() + 86400_000) });
  emulator.faults.add({ op: 'regenerate', id: refused.id, action: { kind: 'status', status: 403, message: 'forbidden' } });
  emulator.faults.add({ op: 'regenerate', id: orphaned.id, action: { kind: 'status', status: 500, commit: true } });
  await writePolicy(dir, {
    version: 1,
    notifications: [
      { type: 'webhook', urlFrom: 'HOOK_URL', events: ['failure', 'orphan', 'success'] },
      { type: 'slack', urlFrom: 'SLACK_URL' },
    ],
    tokens: [
      { name: 'refused', id: refused.id, sinks: [{ type: 'file', path: 'a.token' }] },
      { name: 'orphaned', id: orphaned.id, sinks: [{ type: 'file', path: 'b.token' }] },
    ],
  });
  failNext = 1; // the first delivery attempt fails and is retried
  const result = await runCli(['once', '--config', 'rotation.yaml', '--dotenv', env], { cwd: dir });
  expect(result.code).toBe(1);

  const generic = received
    .filter((r) => r.path === '/generic')
    .map((r) => `${String(r.body.event)}:${String(r.body.token)}`)
    .sort();
  expect(generic).toEqual(['failure:refused', 'orphan:orphaned', 'success:orphaned']);
  const failure = received.find((r) => r.path === '/generic' && r.body.event === 'failure')!.body;
  expect(failure).toMatchObject({
    token: 'refused',
    oldId: refused.id,
    error: { code: 'ERR_API' },
    summary: expect.stringMatching(/could not rotate 'refused'.*403/),
  });

  const slack = received.filter((r) => r.path === '/slack').map((r) => String(r.body.text));
  expect(slack).toHaveLength(2); // failure and orphan by default; no success
  expect(slack.some((t) => t.startsWith('ORPHANED TOKEN'))).toBe(true);

  expectNoLeak({ ...(await leakCheckedOutputs(dir, [result])), webhooks: JSON.stringify(received) }, emulatorSecrets(emulator));
  expect(result.stderr).not.toContain(receiverUrl); // the URL may be a secret too
  await rm(dir, { recursive: true, force: true });
});

it('refuses, before any network call, a notification whose URL variable is missing or not https', async () => {
  const dir = await makeTempDir();
  const env = await writeEmulatorEnv(emulator, dir, { PLAIN: 'http://hooks.example.com/x' });
  await writePolicy(dir, {
    version: 1,
    notifications: [
      { type: 'slack', urlFrom: 'NOPE' },
      { type: 'webhook', urlFrom: 'PLAIN' },
    ],
    tokens: [],
  });
  emulator.requests.length = 0;
  const result = await runCli(['once', '--config', 'rotation.yaml', '--dotenv', env], { cwd: dir });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain('notifications[0].urlFrom: NOPE (or NOPE_FILE) is not set');
  expect(result.stderr).toContain('notifications[1].urlFrom: PLAIN must be an https:// URL (plain http only on loopback)');
  expect(emulator.requests).toHaveLength(0);
  await rm(dir, { recursive: true, force: true });
});

it('never follows a webhook redirect to another origin: the payload and the URL stay where they were configured', async () => {
  const dir = await makeTempDir();
  const elsewhere = await startRecorder();
  const redirecting = await startRecorder((_req, res) => res.writeHead(307, { location: `${elsewhere.url}/stolen` }).end());
  const env = await writeEmulatorEnv(emulator, dir, { HOOK_URL: `${redirecting.url}/hook` });
  const refused = emulator.store.add({ name: 'redirect-refused', expiresAt: new Date(Date.now() + 86400_000) });
  emulator.faults.add({ op: 'regenerate', id: refused.id, action: { kind: 'status', status: 403, message: 'forbidden' } });
  await writePolicy(dir, {
    version: 1,
    notifications: [{ type: 'webhook', urlFrom: 'HOOK_URL' }],
    tokens: [{ name: 'redirect-refused', id: refused.id, sinks: [{ type: 'file', path: 'a.token' }] }],
  });
  const result = await runCli(['once', '--config', 'rotation.yaml', '--dotenv', env], { cwd: dir });
  expect(result.code).toBe(1);
  expect(redirecting.calls.map((c) => c.url)).toEqual(['/hook']);
  expect(elsewhere.calls).toEqual([]);
  expect(result.stderr).toMatch(/notification not delivered/);
  expect(result.stderr).not.toContain(redirecting.url);
  await Promise.all([elsewhere.close(), redirecting.close(), rm(dir, { recursive: true, force: true })]);
});

it('notifies drift by default when a sink loses its secret, but not a new name first delivery', async () => {
  const dir = await makeTempDir();
  const env = await writeEmulatorEnv(emulator, dir, { HOOK_URL: `${receiverUrl}/drift` });
  const token = emulator.store.add({ name: 'watched', expiresAt: new Date(Date.now() + 60 * 86400_000) });
  await writePolicy(dir, {
    version: 1,
    notifications: [{ type: 'webhook', urlFrom: 'HOOK_URL' }],
    tokens: [{ name: 'watched', id: token.id, sinks: [{ type: 'file', path: 'watched.token' }] }],
  });
  const runs = [];
  runs.push(await runCli(['once', '--config', 'rotation.yaml', '--dotenv', env], { cwd: dir }));
  expect(received.filter((r) => r.path === '/drift')).toEqual([]);
  await unlink(join(dir, 'watched.token'));
  runs.push(await runCli(['once', '--config', 'rotation.yaml', '--dotenv', env], { cwd: dir }));
  expect(runs.map((r) => r.code)).toEqual([0, 0]);
  expect(received.filter((r) => r.path === '/drift').map((r) => r.body)).toEqual([
    expect.objectContaining({
      event: 'drift',
      token: 'watched',
      summary: expect.stringMatching(/file watched\.token is missing; delivered the current secret to it again \(no new token\)/),
      drift: [{ sink: 'file watched.token', kind: 'missing' }],
    }),
  ]);
  expectNoLeak({ ...(await leakCheckedOutputs(dir, runs)), webhooks: JSON.stringify(received) }, emulatorSecrets(emulator));
  await rm(dir, { recursive: true, force: true });
});

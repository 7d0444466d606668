import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type CliResult, runCli, seedSink, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { itemsOf } from '../helpers/output-items.js';
import { startRecorder } from '../helpers/recorder.js';

/*
 * Verification before commit, run as a user would against the emulator: a probe with the new
 * token that the service refuses, and a sink that stores something else than it is given.
 */

const DAY = 24 * 3600_000;
const inDays = (d: number) => new Date(Date.now() + d * DAY);

type Recorder = Awaited<ReturnType<typeof startRecorder>>;
let reloads: Recorder;
let notices: Recorder;

beforeAll(async () => {
  reloads = await startRecorder((_req, res) => res.writeHead(204).end());
  notices = await startRecorder((_req, res) => res.writeHead(204).end());
});
afterAll(async () => {
  await Promise.all([reloads.close(), notices.close()]);
});

describe('verify: the new token is checked before anyone depends on it', () => {
  const fx = useCliFixture({ env: () => ({ RELOAD_URL: `${reloads.url}/reload`, NOTIFY_URL: `${notices.url}/notify` }) });

  async function cli(...args: string[]): Promise<CliResult> {
    const result = await runCli([...args, '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir });
    fx.results.push(result);
    return result;
  }
  const regenerates = () => fx.emulator.requests.filter((r) => r.op === 'regenerate' && r.committed).length;
  async function whoami(secret: string) {
    const response = await fetch(`${fx.emulator.apiUrl}/_emulator/whoami`, { headers: { authorization: `Bearer ${secret}` } });
    return response.ok ? ((await response.json()) as { id: string }).id : undefined;
  }

  it('a probe answering 401 keeps the secret staged, consumers untouched, exit 1; healthy, the next run commits with no second regenerate', async () => {
    const token = fx.emulator.store.add({ name: 'ingest', expiresAt: inDays(1) });
    await seedSink(fx.dir, 'ingest.token', token.secret);
    await writePolicy(fx.dir, {
      version: 1,
      defaults: {
        verify: { url: `${fx.emulator.apiUrl}/v2/user`, retries: 0 },
        reload: [{ type: 'webhook', urlFrom: 'RELOAD_URL' }],
      },
      tokens: [{ name: 'ingest', id: token.id, sinks: [{ type: 'file', path: 'ingest.token' }] }],
      notifications: [{ type: 'webhook', urlFrom: 'NOTIFY_URL', events: ['verify_failed'] }],
    });
    // The knob, through the control API as a user's CI would set it.
    const knob = await fetch(`${fx.emulator.apiUrl}/_emulator/probe-failures`, {
      method: 'PUT',
      body: JSON.stringify({ names: ['ingest'] }),
    });
    expect(knob.status).toBe(200);
    const reloadsBefore = reloads.calls.length;

    const refused = await cli('once', '--json');
    expect(refused.code, refused.stderr).toBe(1);
    const [item] = itemsOf(refused.stdout, 'RunResult');
    expect(item).toMatchObject({
      result: 'failed',
      verification: { result: 'failed', check: 'probe', message: expect.stringMatching(/answered 401, expected 200/) },
      error: { code: 'ERR_VERIFY_FAILED' },
    });
    expect(reloads.calls.length, 'no consumer reloaded').toBe(reloadsBefore);
    expect(notices.calls.map((c) => (JSON.parse(c.body) as { event: string }).event)).toContain('verify_failed');
    // Delivered, not committed: the file holds the new token, the state still the old id.
    expect(await whoami(await readFile(join(fx.dir, 'ingest.token'), 'utf8'))).toBe(item.newId);
    const status = await cli('status');
    expect(status.code).toBe(1);
    expect(status.stdout).toMatch(new RegExp(`old token stops at .*, new token ${item.newId as string} not verified \\(probe`));

    await fetch(`${fx.emulator.apiUrl}/_emulator/probe-failures`, { method: 'PUT', body: JSON.stringify({ names: [] }) });
    const healthy = await cli('once', '--json');
    expect(healthy.code, healthy.stderr).toBe(0);
    expect(itemsOf(healthy.stdout, 'RunResult')[0]).toMatchObject({
      result: 'ok',
      check: 'resumed',
      newId: item.newId,
      verification: { result: 'passed', checks: ['service', 'read-back', 'probe'] },
    });
    expect(regenerates()).toBe(1);
    expect(reloads.calls.length, 'reloaded once, after the commit').toBe(reloadsBefore + 1);
  }, 60_000);

  it('a sink that mangles what it stores is caught by read-back, written again by the next run, and committed once it holds the secret', async () => {
    const token = fx.emulator.store.add({ name: 'ingest', expiresAt: inDays(1) });
    await seedSink(fx.dir, 'ingest.token', token.secret);
    // A push program that stores what it is given with a suffix, as a broken integration might.
    const program = join(fx.dir, 'push.mjs');
    const writeProgram = (suffix: string) =>
      writeFile(
        program,
        `#!${process.execPath}
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
const [mode, file] = process.argv.slice(2);
if (mode === 'read') { if (existsSync(file)) process.stdout.write(readFileSync(file)); process.exit(0); }
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
writeFileSync(file, Buffer.concat(chunks).toString('utf8') + ${JSON.stringify(suffix)}, { mode: 0o600 });
`,
      );
    await writeProgram('-mangled');
    await chmod(program, 0o700);
    const pushed = join(fx.dir, 'pushed.token');
    await seedSink(fx.dir, 'pushed.token', token.secret);
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [
        {
          name: 'ingest',
          id: token.id,
          sinks: [
            { type: 'file', path: 'ingest.token' },
            { type: 'exec', command: [program, 'write', pushed], read: [program, 'read', pushed] },
          ],
        },
      ],
    });

    const mangled = await cli('once', '--json');
    expect(mangled.code, mangled.stderr).toBe(1);
    expect(itemsOf(mangled.stdout, 'RunResult')[0]).toMatchObject({
      result: 'failed',
      verification: {
        result: 'failed',
        check: 'read-back',
        message: expect.stringMatching(/^exec .* holds another secret than the one delivered$/),
      },
    });

    await writeProgram('');
    const fixed = await cli('once', '--json');
    expect(fixed.code, fixed.stderr).toBe(0);
    const [item] = itemsOf(fixed.stdout, 'RunResult');
    expect(item).toMatchObject({ result: 'ok', check: 'resumed', verification: { result: 'passed' } });
    expect(await readFile(pushed, 'utf8')).toBe(await readFile(join(fx.dir, 'ingest.token'), 'utf8'));
    expect(regenerates()).toBe(1);
  }, 60_000);
});

import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';

import { startEmulator } from 'token-rotator-emulator';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { type CliResult, runCli, seedSink, startCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { journalEntry } from '../helpers/journal-entries.js';
import { expectNoLeak } from '../helpers/leaks.js';
import { itemsOf } from '../helpers/output-items.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const DAY = 24 * 3600_000;
const inDays = (d: number) => new Date(Date.now() + d * DAY);

describe('token-rotator once / plan / validate against the fx.emulator', () => {
  const fx = useCliFixture();

  async function cli(...args: string[]): Promise<CliResult> {
    const result = await runCli([...args, '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir });
    fx.results.push(result);
    return result;
  }

  const sink = (name: string) => ({ type: 'file', path: `secrets/${name}.token` });
  const regenerates = () => fx.emulator.requests.filter((r) => r.op === 'regenerate');

  async function whoami(secret: string) {
    const response = await fetch(`${fx.emulator.apiUrl}/_emulator/whoami`, { headers: { authorization: `Bearer ${secret}` } });
    return response.ok ? ((await response.json()) as { id: string; name: string }) : undefined;
  }

  it('rotates the due token, delivers a working secret, and a second run changes nothing', async () => {
    const due = fx.emulator.store.add({ name: 'due', expiresAt: inDays(2) });
    const fine = fx.emulator.store.add({ name: 'fine', expiresAt: inDays(60) });
    await seedSink(fx.dir, 'secrets/fine.token', fine.secret);
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [
        { name: 'due', id: due.id, sinks: [sink('due')] },
        { name: 'fine', id: fine.id, sinks: [sink('fine')] },
      ],
    });

    const first = await cli('once', '--json');
    expect(first.code, first.stderr).toBe(0);
    const outcomes = itemsOf(first.stdout) as Array<Record<string, unknown>>;
    expect(outcomes.map((o) => [o.name, o.action])).toEqual([
      ['due', 'rotate'],
      ['fine', 'skip'],
    ]);
    const rotated = outcomes[0]!;
    expect(rotated.id).toBe(due.id);
    expect(rotated.newId).not.toBe(due.id);
    expect(rotated.sinks).toEqual([
      { type: expect.any(String), target: expect.any(String), description: 'file secrets/due.token', result: 'created' },
    ]);

    // the sink holds a working secret of the new token, 0600
    const delivered = await readFile(join(fx.dir, 'secrets/due.token'), 'utf8');
    expect(await whoami(delivered)).toMatchObject({ id: rotated.newId, name: 'due' });
    expect((await stat(join(fx.dir, 'secrets/due.token'))).mode & 0o777).toBe(0o600);

    // the request sent: one regenerate, overlap 1h, lifetime 30d
    expect(regenerates()).toHaveLength(1);
    const body = regenerates()[0]!.body as { existingTokenExpiresAt: string; newTokenExpiresAt: string };
    expect(Date.parse(body.existingTokenExpiresAt) - Date.parse(regenerates()[0]!.at)).toBeGreaterThan(3600_000 - 5000);
    expect(Date.parse(body.existingTokenExpiresAt) - Date.parse(regenerates()[0]!.at)).toBeLessThanOrEqual(3600_000);
    expect(Date.parse(body.newTokenExpiresAt) - Date.parse(regenerates()[0]!.at)).toBeGreaterThan(30 * DAY - 5000);

    // the second run follows the new id and regenerates nothing
    fx.emulator.requests.length = 0;
    const second = await cli('once');
    expect(second.code, second.stderr).toBe(0);
    expect(regenerates()).toHaveLength(0);
    expect(fx.emulator.requests.map((r) => r.id).sort()).toEqual([rotated.newId, fine.id].sort());
    expect(second.stdout).toMatch(/due\s+skip\s/);

    // and plan says why
    const plan = await cli('plan', '--json');
    expect(plan.code).toBe(0);
    expect(itemsOf(plan.stdout)).toEqual([
      expect.objectContaining({
        name: 'due',
        id: rotated.newId,
        action: 'skip',
        reason: expect.stringMatching(/^expires in 29d 23h; due in 22d 23h$/),
      }),
      expect.objectContaining({ name: 'fine', id: fine.id, action: 'skip' }),
    ]);
  });

  it('warns when TLS certificate checks are turned off for the process', async () => {
    const fine = fx.emulator.store.add({ name: 'tls', expiresAt: inDays(60) });
    await seedSink(fx.dir, 'secrets/tls.token', fine.secret);
    await writePolicy(fx.dir, { version: 1, tokens: [{ name: 'tls', id: fine.id, sinks: [sink('tls')] }] });
    const result = await runCli(['once', '--config', 'rotation.yaml', '--dotenv', fx.envFile], {
      cwd: fx.dir,
      env: { NODE_TLS_REJECT_UNAUTHORIZED: '0' },
    });
    fx.results.push(result);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/NODE_TLS_REJECT_UNAUTHORIZED=0 turns off TLS certificate checks/);
  });

  it('plan changes nothing: no regenerate, no state folder, no sink file', async () => {
    const due = fx.emulator.store.add({ name: 'p', expiresAt: inDays(1) });
    await writePolicy(fx.dir, { version: 1, tokens: [{ name: 'p', id: due.id, sinks: [sink('p')] }] });
    const plan = await cli('plan');
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(/^TOKEN\s+ACTION\s+ID\s+EXPIRES\s+DUE\s+REASON\n/);
    expect(plan.stdout).toMatch(/p\s+rotate\s+\S+\s+\S+\s+\S+\s+expires in 23h 59m, within renewBefore 7d/);
    expect(regenerates()).toHaveLength(0);
    await expect(stat(join(fx.dir, 'state'))).rejects.toThrow(/ENOENT/);
    await expect(stat(join(fx.dir, 'secrets'))).rejects.toThrow(/ENOENT/);
  });

  it('goes on with the other tokens when one fails, names it, and exits 1', async () => {
    const broken = fx.emulator.store.add({ name: 'broken', expiresAt: inDays(1) });
    const ok = fx.emulator.store.add({ name: 'ok', expiresAt: inDays(1) });
    fx.emulator.faults.add({
      op: 'regenerate',
      id: broken.id,
      action: { kind: 'status', status: 403, message: 'forbidden: missing apiTokens|update' },
    });
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [
        { name: 'broken', id: broken.id, sinks: [sink('broken')] },
        { name: 'ok', id: ok.id, sinks: [sink('ok')] },
      ],
    });
    const run = await cli('once');
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/broken\s+failed\s+.*the service answered 403: forbidden: missing apiTokens\|update/);
    expect(run.stdout).toMatch(/ok\s+rotate\s/);
    expect(regenerates().filter((r) => r.id === broken.id)).toHaveLength(1);
    expect(run.stderr).toMatch(/"tokenName":"broken".*"code":"ERR_API"/);
  });

  it('keeps the secret staged when a sink breaks after its preflight, exits 1, and delivers it on the next run without regenerating', async () => {
    const token = fx.emulator.store.add({ name: 's', expiresAt: inDays(1) });
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [{ name: 's', id: token.id, sinks: [sink('s'), { type: 'file', path: 'blocked/s.token' }] }],
    });
    // Both sinks pass their preflight; while the service takes its time over the regenerate, a file
    // comes to stand where the second sink's folder should be.
    fx.emulator.faults.add({ op: 'regenerate', action: { kind: 'hang', ms: 5_000, commit: true } });
    const running = startCli(['once', '--json', '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir });
    await expect.poll(() => regenerates().length, { timeout: 60_000, interval: 20 }).toBe(1);
    await writeFile(join(fx.dir, 'blocked'), 'a file where a folder should be');
    const first = await running.done;
    fx.results.push(first);
    expect(first.code, first.stderr).toBe(1);
    const [outcome] = itemsOf(first.stdout) as Array<{
      result: string;
      sinks: Array<{ description: string; result: string }>;
      error: { message: string };
    }>;
    expect(outcome!.result).toBe('failed');
    expect(outcome!.sinks).toEqual([
      { type: expect.any(String), target: expect.any(String), description: 'file secrets/s.token', result: 'created' },
      {
        type: expect.any(String),
        target: expect.any(String),
        description: 'file blocked/s.token',
        result: 'failed',
        error: expect.stringMatching(/a file is in the way of a folder/),
      },
    ]);
    expect(outcome!.error.message).toMatch(/not yet delivered to file blocked\/s.token; the secret stays staged/);
    expect(regenerates()).toHaveLength(1);

    await rm(join(fx.dir, 'blocked'));
    const second = await cli('once', '--json');
    expect(second.code, second.stderr).toBe(0);
    const [again] = itemsOf(second.stdout) as Array<{ action: string; check: string; newId: string; sinks: unknown[] }>;
    expect(again).toMatchObject({ action: 'rotate', check: 'resumed', newId: (outcome as unknown as { newId: string }).newId });
    expect(again!.sinks).toEqual([
      { type: expect.any(String), target: expect.any(String), description: 'file secrets/s.token', result: 'unchanged' },
      { type: expect.any(String), target: expect.any(String), description: 'file blocked/s.token', result: 'created' },
    ]);
    expect(regenerates()).toHaveLength(1);
    expect(await journalEntry(join(fx.dir, 'state'), 's')).toBeUndefined();
    const both = await Promise.all(['secrets/s.token', 'blocked/s.token'].map((f) => readFile(join(fx.dir, f), 'utf8')));
    expect(both[0]).toBe(both[1]);
    expect(await whoami(both[0]!)).toMatchObject({ id: again!.newId });
  });

  it('takes --dotenv for its env file, and refuses --env-file (which Node.js itself reads) with a pointer to it', async () => {
    await writePolicy(fx.dir, { version: 1, tokens: [] });
    const missing = await runCli(['validate', '--config', 'rotation.yaml', '--dotenv', 'missing.env'], { cwd: fx.dir });
    fx.results.push(missing);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--dotenv missing\.env: cannot read: ENOENT/);
    const old = await runCli(['validate', '--config', 'rotation.yaml', '--env-file', fx.envFile], { cwd: fx.dir });
    fx.results.push(old);
    expect(old.code).toBe(2);
    expect(old.stderr).toMatch(/--env-file: is an option of Node\.js itself.*use --dotenv FILE/);
    expect(fx.emulator.requests).toEqual([]);
  });

  it('uses a static bearer with the org id header the service needs', async () => {
    await fx.emulator.close();
    fx.emulator = await startEmulator({ seed: { personalTokens: [{ token: 'xapt-canary-personal-0400', orgId: 'acme' }] } });
    const token = fx.emulator.store.add({ name: 'pat', expiresAt: inDays(1) });
    await writePolicy(fx.dir, { version: 1, tokens: [{ name: 'pat', id: token.id, sinks: [sink('pat')] }] });
    const pat = {
      ROTATOR_API_URL: fx.emulator.apiUrl,
      ROTATOR_ACCESS_TOKEN: 'xapt-canary-personal-0400',
      ROTATOR_STATE_DIR: join(fx.dir, 'state'),
    };

    await writeFile(
      fx.envFile,
      Object.entries(pat)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n'),
    );
    const withoutOrg = await cli('once');
    expect(withoutOrg.code).toBe(1);
    expect(withoutOrg.stdout).toMatch(/retrieve token \S+: the service answered 403/);
    expect(withoutOrg.stderr).toMatch(/personal access token; the service also needs ROTATOR_ORG_ID/);

    await writeFile(
      fx.envFile,
      Object.entries({ ...pat, ROTATOR_ORG_ID: 'acme' })
        .map(([k, v]) => `${k}=${v}`)
        .join('\n'),
    );
    const withOrg = await cli('once');
    expect(withOrg.code, withOrg.stderr).toBe(0);
    expect(withOrg.stdout).toMatch(/pat\s+rotate\s/);
    expectNoLeak({ stdout: withOrg.stdout + withoutOrg.stdout, stderr: withOrg.stderr + withoutOrg.stderr }, ['xapt-canary-personal-0400']);
  });
});

describe('configuration and usage errors', () => {
  let dir: string;
  let listener: Server;
  let connections = 0;
  let port: number;

  beforeAll(async () => {
    listener = createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    port = (listener.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => listener.close(() => resolve())));
  beforeEach(async () => {
    dir = await makeTempDir();
    connections = 0;
  });

  const env = () => ({
    ROTATOR_API_URL: `http://127.0.0.1:${port}`,
    ROTATOR_OAUTH_ISSUER: `http://127.0.0.1:${port}/oauth`,
    ROTATOR_OAUTH_CLIENT_ID: 'c',
    ROTATOR_OAUTH_CLIENT_SECRET: 'canary-config-secret-0500',
  });

  it.each(['once', 'plan', 'validate'])('%s exits 2 on a bad policy, lists every problem, and touches no network', async (command) => {
    await mkdir(join(dir, 'config'));
    await writeFile(
      join(dir, 'config/rotation.yaml'),
      'version: 1\ntokens:\n  - name: a\n    sinks: [{ type: file }]\n  - name: a\n    id: x\n    overlap: forever\n    sinks: [{ type: file, path: a }]\n',
    );
    const result = await runCli([command], { cwd: dir, env: env() });
    expect(result.code).toBe(2);
    // each at file:line:col of the entry it names, as a compiler writes it
    const at = (place: string) => `${join(dir, 'config/rotation.yaml')}:${place}:`;
    expect(result.stderr).toBe(
      'token-rotator: 4 configuration problems:\n' +
        `  ${at('3:5')} tokens[0].id: required\n` +
        `  ${at('4:13')} tokens[0].sinks[0].path: required\n` +
        // the duplicate name in the same pass as the field errors
        `  ${at('5:5')} tokens[1].name: 'a' is already used by tokens[0]; names must be unique\n` +
        `  ${at('7:5')} tokens[1].overlap: 'forever' is not a duration such as 90s, 15m, 1h30m, 7d, 2w or ISO 8601 P7D\n`,
    );
    expect(result.stdout).toBe('');
    expect(connections).toBe(0);
  });

  it('exits 2 for plain http to a host that is not loopback, naming the variable', async () => {
    await writePolicy(dir, { version: 1, tokens: [] });
    const result = await runCli(['once', '--config', 'rotation.yaml'], {
      cwd: dir,
      env: { ...env(), ROTATOR_API_URL: 'http://api.example.com' },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('env.ROTATOR_API_URL: plain http:// is only allowed for loopback hosts');
    expect(connections).toBe(0);
  });

  it('reports policy and environment problems together, and a missing policy file by name', async () => {
    const result = await runCli(['validate', '--config', 'nope.yaml'], { cwd: dir, env: {} });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('env.ROTATOR_API_URL: required');
    expect(result.stderr).toContain('nope.yaml: cannot read policy file: no such file');
  });

  it('validates a good setup with exit 0 and no network', async () => {
    await writePolicy(dir, { version: 1, tokens: [{ name: 'a', id: '1', sinks: [{ type: 'file', path: 'a' }] }] });
    const result = await runCli(['validate', '--config', 'rotation.yaml'], { cwd: dir, env: env() });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^policy rotation.yaml: 1 token, 1 sink\n/);
    expect(connections).toBe(0);
    expectNoLeak({ stdout: result.stdout, stderr: result.stderr }, ['canary-config-secret-0500']);
  });

  it.each([
    [['frobnicate'], 2],
    [['once', '--no-such-flag'], 2],
    [['emulator', '--port', '0'], 2],
    [['--help'], 0],
  ])('exits %j -> %i', async (args, code) => {
    expect((await runCli(args, { cwd: dir })).code).toBe(code);
  });

  it('prints its version', async () => {
    const result = await runCli(['--version'], { cwd: dir });
    expect(result.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });
});

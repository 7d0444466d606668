import { mkdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { parse as parseDotenv } from 'dotenv';
import { describe, expect, it } from 'vitest';

import { type CliResult, runCli, seedSink, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { itemsOf } from '../helpers/output-items.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const DAY = 24 * 3600_000;
const inDays = (d: number) => new Date(Date.now() + d * DAY);

interface Outcome {
  name: string;
  action: string;
  check?: string;
  reason: string;
  newId?: string;
  drift?: Array<{ description: string; kind: string }>;
}

/**
 * Every sink holds the current secret: each check reads the sinks back, and a sink that is missing,
 * holds another secret, or is new in the policy is drift, repaired by delivering the current
 * secret the state holds again, with no new token (or by rotating, or only reported, as the policy says).
 */
describe('drift repair', () => {
  const fx = useCliFixture();

  async function cli(...args: string[]): Promise<CliResult> {
    const result = await runCli([...args, '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir });
    fx.results.push(result);
    return result;
  }
  async function once(): Promise<{ run: CliResult; outcomes: Outcome[] }> {
    const run = await cli('once', '--json');
    return { run, outcomes: itemsOf(run.stdout) as Outcome[] };
  }
  const regenerates = () => fx.emulator.requests.filter((r) => r.op === 'regenerate').length;
  const sinkFile = (path: string) => join(fx.dir, path);

  async function whoami(path: string) {
    const secret = await readFile(sinkFile(path), 'utf8');
    const response = await fetch(`${fx.emulator.apiUrl}/_emulator/whoami`, { headers: { authorization: `Bearer ${secret}` } });
    return response.ok ? ((await response.json()) as { id: string }) : undefined;
  }

  /** A token not due for 60 days, whose sink already holds its secret: what an app in production has. */
  async function settled(name: string, extra: Record<string, unknown> = {}) {
    const token = fx.emulator.store.add({ name, expiresAt: inDays(60) });
    await seedSink(fx.dir, `secrets/${name}.token`, token.secret);
    const policy = { version: 1, tokens: [{ name, id: token.id, ...extra, sinks: [{ type: 'file', path: `secrets/${name}.token` }] }] };
    await writePolicy(fx.dir, policy);
    const first = await once();
    expect(first.run.code, first.run.stderr).toBe(0);
    expect(first.outcomes[0]).toMatchObject({ action: 'skip', check: 'notDue' });
    expect(first.run.stderr).toMatch(/adopted what the sinks hold as the current secret/);
    expect(regenerates()).toBe(0);
    return { token, policy };
  }

  it('a deleted sink file is noticed by the next run, which delivers the same secret again with no new token, and says why', async () => {
    const { token } = await settled('deleted');
    await unlink(sinkFile('secrets/deleted.token'));
    const { run, outcomes } = await once();
    expect(run.code, run.stderr).toBe(0);
    expect(outcomes[0]).toMatchObject({
      action: 'redeliver',
      check: 'sinkDrift',
      reason: 'sink drift: file secrets/deleted.token is missing; delivering the current secret again',
      drift: [expect.objectContaining({ description: 'file secrets/deleted.token', kind: 'missing' })],
    });
    expect(await readFile(sinkFile('secrets/deleted.token'), 'utf8')).toBe(token.secret);
    expect(fx.emulator.store.get(token.id)?.expiresAt?.getTime(), 'no expiry changed').toBe(token.expiresAt!.getTime());
    // Repaired: the next run finds nothing to do.
    const after = await once();
    expect(after.outcomes[0]).toMatchObject({ action: 'skip', check: 'notDue' });
    expect(regenerates()).toBe(0);
  });

  it('a sink edited behind its back holds another secret: drift, repaired with the same secret', async () => {
    const { token } = await settled('edited');
    await writeFile(sinkFile('secrets/edited.token'), 'xaat-someone-elses-token');
    const { outcomes } = await once();
    expect(outcomes[0]).toMatchObject({
      action: 'redeliver',
      reason: expect.stringMatching(/^sink drift: file secrets\/edited.token holds another secret/),
    });
    expect(await whoami('secrets/edited.token')).toMatchObject({ id: token.id });
    expect(regenerates()).toBe(0);
  });

  it('with onDrift: rotate, a deleted sink is repaired by a new token, as before', async () => {
    await settled('rotated', { onDrift: 'rotate' });
    await unlink(sinkFile('secrets/rotated.token'));
    const { run, outcomes } = await once();
    expect(run.code, run.stderr).toBe(0);
    expect(outcomes[0]).toMatchObject({ action: 'rotate', reason: 'sink drift: file secrets/rotated.token is missing (onDrift: rotate)' });
    expect(await whoami('secrets/rotated.token')).toMatchObject({ id: outcomes[0]!.newId });
    expect(regenerates()).toBe(1);
  });

  it('a sink added to the policy is delivered to by the next run, with the secret the others hold', async () => {
    const { token, policy } = await settled('grown');
    policy.tokens[0]!.sinks.push({ type: 'file', path: 'also/grown.env', format: 'env' } as (typeof policy.tokens)[0]['sinks'][0]);
    await writePolicy(fx.dir, policy);
    const { run, outcomes } = await once();
    expect(run.code, run.stderr).toBe(0);
    expect(outcomes[0]).toMatchObject({
      action: 'redeliver',
      reason: expect.stringMatching(/^sink drift: file also\/grown.env is missing/),
    });
    const env = parseDotenv(await readFile(sinkFile('also/grown.env'), 'utf8'));
    expect(env.AXIOM_TOKEN).toBe(token.secret);
    expect(regenerates()).toBe(0);
  });

  it('a sink new in the policy that already holds content is drift once the name has a record', async () => {
    const { policy, token } = await settled('added');
    await seedSink(fx.dir, 'elsewhere/added.token', 'xaat-something-placed-by-hand');
    policy.tokens[0]!.sinks.push({ type: 'file', path: 'elsewhere/added.token' });
    await writePolicy(fx.dir, policy);
    const { outcomes } = await once();
    expect(outcomes[0]).toMatchObject({
      action: 'redeliver',
      reason: expect.stringMatching(/^sink drift: file elsewhere\/added.token is new in the policy/),
    });
    expect(await readFile(sinkFile('elsewhere/added.token'), 'utf8')).toBe(token.secret);
  });

  it('onDrift: report says so, exits 1, and regenerates nothing', async () => {
    await settled('reported', { onDrift: 'report' });
    await unlink(sinkFile('secrets/reported.token'));
    const { run, outcomes } = await once();
    expect(run.code).toBe(1);
    expect(outcomes[0]).toMatchObject({ action: 'skip', drift: [expect.objectContaining({ kind: 'missing' })] });
    expect(regenerates()).toBe(0);
  });

  it('on a first run, a sink that holds content is adopted and an empty one is delivered to, so a new policy delivers everywhere', async () => {
    const present = fx.emulator.store.add({ name: 'present', expiresAt: inDays(60) });
    const absent = fx.emulator.store.add({ name: 'absent', expiresAt: inDays(60) });
    await seedSink(fx.dir, 'secrets/present.token', present.secret);
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [
        { name: 'present', id: present.id, sinks: [{ type: 'file', path: 'secrets/present.token' }] },
        { name: 'absent', id: absent.id, sinks: [{ type: 'file', path: 'secrets/absent.token' }] },
      ],
    });
    const { run, outcomes } = await once();
    expect(run.code, run.stderr).toBe(0);
    expect(outcomes.map((o) => [o.name, o.action, o.check])).toEqual([
      ['present', 'skip', 'notDue'],
      ['absent', 'rotate', 'sinkDrift'],
    ]);
    expect(await whoami('secrets/absent.token')).toMatchObject({ id: outcomes[1]!.newId });
    expect(fx.emulator.requests.filter((r) => r.op === 'regenerate').map((r) => r.id)).toEqual([absent.id]);
  });

  it('plan shows drift, and status flags it from the sinks alone, without the token service', async () => {
    await settled('watched');
    await unlink(sinkFile('secrets/watched.token'));
    const plan = await cli('plan', '--json');
    expect(itemsOf(plan.stdout)).toEqual([
      expect.objectContaining({
        action: 'redeliver',
        reason: 'sink drift: file secrets/watched.token is missing; delivering the current secret again',
      }),
    ]);
    // plan and once reach the same decision: once does what plan said.
    const { outcomes } = await once();
    expect(outcomes[0]).toMatchObject({ action: 'redeliver' });
    await unlink(sinkFile('secrets/watched.token'));

    await writeFile(fx.envFile, (await readFile(fx.envFile, 'utf8')).replace(/ROTATOR_API_URL=.*/, 'ROTATOR_API_URL=http://127.0.0.1:9'));
    fx.emulator.requests.length = 0;
    const status = await cli('status');
    expect(status.code).toBe(1);
    expect(status.stdout).toMatch(/watched .*file secrets\/watched\.token is missing/);
    expect(fx.emulator.requests).toEqual([]);
  });
});

describe('state that does not wander', () => {
  const fx = useCliFixture();

  /** An env file without ROTATOR_STATE_DIR: the state then lives beside the policy file. */
  async function envWithoutStateDir(): Promise<string> {
    const text = await readFile(fx.envFile, 'utf8');
    const file = join(fx.dir, 'no-state-dir.env');
    await writeFile(file, text.replace(/^ROTATOR_STATE_DIR=.*\n/m, ''), { mode: 0o600 });
    return file;
  }

  it('without ROTATOR_STATE_DIR the state is found from the policy file, from whatever folder a run starts in', async () => {
    const token = fx.emulator.store.add({ name: 'anywhere', expiresAt: inDays(2) });
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [{ name: 'anywhere', id: token.id, sinks: [{ type: 'file', path: 'secrets/anywhere.token' }] }],
    });
    const env = await envWithoutStateDir();
    const policy = join(fx.dir, 'rotation.yaml');
    const elsewhere = await makeTempDir();
    try {
      const first = await runCli(['once', '--config', policy, '--dotenv', env], { cwd: fx.dir });
      fx.results.push(first);
      expect(first.code, first.stderr).toBe(0);
      const second = await runCli(['once', '--json', '--config', policy, '--dotenv', env], { cwd: elsewhere });
      fx.results.push(second);
      expect(second.code, second.stderr).toBe(0);
      expect(itemsOf(second.stdout)).toEqual([expect.objectContaining({ action: 'skip', check: 'notDue' })]);
      expect(fx.emulator.requests.filter((r) => r.op === 'regenerate')).toHaveLength(1);
      expect(JSON.parse(await readFile(join(fx.dir, '.token-rotator/tokens/anywhere.json'), 'utf8'))).toMatchObject({ name: 'anywhere' });
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });

  it('a lost state is recovered from the metadata a json sink keeps: no replaced id is regenerated', async () => {
    const token = fx.emulator.store.add({ name: 'recovered', expiresAt: inDays(2) });
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [{ name: 'recovered', id: token.id, sinks: [{ type: 'file', path: 'secrets/recovered.json', format: 'json' }] }],
    });
    const first = await runCli(['once', '--json', '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir });
    fx.results.push(first);
    const rotated = (itemsOf(first.stdout) as Outcome[])[0]!;
    expect(rotated.action).toBe('rotate');

    await rm(join(fx.dir, 'state'), { recursive: true });
    await mkdir(join(fx.dir, 'state'));
    fx.emulator.requests.length = 0;
    const second = await runCli(['once', '--json', '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir });
    fx.results.push(second);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/no state record for this name: its current id comes from the sinks' metadata/);
    expect(itemsOf(second.stdout)).toEqual([
      expect.objectContaining({
        action: 'skip',
        id: rotated.newId,
        reason: expect.stringMatching(/recovered from the sinks' metadata/),
      }),
    ]);
    expect(fx.emulator.requests.filter((r) => r.op === 'regenerate')).toEqual([]);
    expect(fx.emulator.requests.map((r) => r.id)).toEqual([rotated.newId]);
  });
});

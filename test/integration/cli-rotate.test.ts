import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';

import { describe, expect, it } from 'vitest';

import { run } from '../../src/cli/run.js';
import { runCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';

const DAY = 24 * 3600_000;

describe('token-rotator rotate (emergency rotation)', () => {
  const fx = useCliFixture();

  async function setup(name: string, expiresInDays = 60) {
    const token = fx.emulator.store.add({ name, expiresAt: new Date(Date.now() + expiresInDays * DAY) });
    await writePolicy(fx.dir, { version: 1, tokens: [{ name, id: token.id, sinks: [{ type: 'file', path: `secrets/${name}.token` }] }] });
    return token;
  }
  async function rotate(...args: string[]) {
    const result = await runCli(['rotate', ...args, '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir });
    fx.results.push(result);
    return result;
  }
  const sent = () =>
    fx.emulator.requests
      .filter((r) => r.op === 'regenerate')
      .map((r) => ({ at: Date.parse(r.at), ...(r.body as { existingTokenExpiresAt: string }) }));

  it('--revoke-now rotates a token that is not due and ends the old one now, with the reason in the audit log', async () => {
    const token = await setup('leaked');
    const started = Date.now();
    const result = await rotate('leaked', '--revoke-now', '--reason', 'pasted in a public channel');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/leaked\s+rotate\s+\S+ -> \S+.*manual rotation: pasted in a public channel/);
    const [request] = sent();
    // "Now": after the command started and no later than the request reached the service, however
    // long a loaded machine took in between (not an hour's overlap, nor a time in the past).
    const existing = Date.parse(request!.existingTokenExpiresAt);
    expect(existing).toBeGreaterThanOrEqual(started);
    expect(existing).toBeLessThanOrEqual(request!.at);
    expect(fx.emulator.store.get(token.id)).toBeUndefined(); // the old token is gone at once
    expect(result.stderr).toMatch(/"reason":"pasted in a public channel".*"msg":"emergency rotation requested"/);
    expect(result.stderr).toMatch(/"step":"staged".*"reason":"manual rotation: pasted in a public channel"/);
  });

  describe('earlier tokens of the name, still inside their own overlap', () => {
    async function rotatedOnce(name: string) {
      const first = fx.emulator.store.add({ name, expiresAt: new Date(Date.now() + 2 * DAY) });
      await writePolicy(fx.dir, { version: 1, tokens: [{ name, id: first.id, sinks: [{ type: 'file', path: `secrets/${name}.token` }] }] });
      const once = await runCli(['once', '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir });
      fx.results.push(once);
      expect(once.code, once.stderr).toBe(0);
      expect(fx.emulator.store.isAlive(fx.emulator.store.all().find((t) => t.id === first.id)!)).toBe(true); // 1 h overlap
      return first;
    }

    it('--revoke-now ends them too; the throwaway it mints dies within a minute and its secret is kept nowhere', async () => {
      const first = await rotatedOnce('leaked-twice');
      const result = await rotate('leaked-twice', '--revoke-now', '--yes', '--reason', 'leaked an hour ago');
      expect(result.code, result.stderr).toBe(0);
      const alive = fx.emulator.store.all().filter((t) => t.name === 'leaked-twice' && fx.emulator.store.isAlive(t));
      const delivered = await readFile(join(fx.dir, 'secrets/leaked-twice.token'), 'utf8');
      const current = alive.find((t) => t.secret === delivered)!;
      expect(current).toBeDefined();
      // Only the delivered token, and the throwaway that ended the first one, still work.
      const others = alive.filter((t) => t !== current);
      expect(others).toHaveLength(1);
      expect(others[0]!.expiresAt!.getTime() - Date.now()).toBeLessThanOrEqual(60_000);
      expect(fx.emulator.store.isAlive(fx.emulator.store.all().find((t) => t.id === first.id)!)).toBe(false);
      expect(result.stdout).toMatch(new RegExp(`leaked-twice\\s+${first.id}\\s+ended`));
      // The throwaway's secret appears in no output or state: the fixture's leak sweep checks every issued secret.
    });

    it('a token that cannot be ended is named loudly with its expiry, and the run fails', async () => {
      const first = await rotatedOnce('stubborn');
      fx.emulator.faults.add({ op: 'regenerate', id: first.id, action: { kind: 'status', status: 403, message: 'forbidden' } });
      const result = await rotate('stubborn', '--revoke-now', '--yes');
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(new RegExp(`stubborn\\s+${first.id}\\s+STILL ALIVE`));
      expect(result.stderr).toMatch(/STILL ALIVE: token/);
    });
  });

  it('names given twice are rotated once', async () => {
    await setup('twice');
    const result = await rotate('twice', 'twice', '--yes');
    expect(result.code, result.stderr).toBe(0);
    expect(sent()).toHaveLength(1);
  });

  it('--overlap gives the old token that long', async () => {
    await setup('soft');
    const result = await rotate('soft', '--overlap', '10m', '--yes');
    expect(result.code, result.stderr).toBe(0);
    const [request] = sent();
    expect(Date.parse(request!.existingTokenExpiresAt) - request!.at).toBeGreaterThan(10 * 60_000 - 2000);
    expect(Date.parse(request!.existingTokenExpiresAt) - request!.at).toBeLessThanOrEqual(10 * 60_000);
  });

  it('--overlap never extends a token that expires sooner', async () => {
    const token = await setup('short', 5 / (24 * 60)); // expires in 5 minutes
    const expiresAt = token.expiresAt!.getTime();
    await rotate('short', '--overlap', '1h');
    const [request] = sent();
    expect(Date.parse(request!.existingTokenExpiresAt)).toBeLessThan(expiresAt);
  });

  it.each([
    [['nobody'], /rotate nobody: no token of that name in the policy; known: known/],
    [['known', '--revoke-now', '--overlap', '5m'], /cannot be used with option '--overlap/],
    [['known', '--overlap', 'soon'], /--overlap: 'soon' is not a duration/],
  ])('exits 2 on %j before any network call', async (args, message) => {
    await setup('known');
    const result = await rotate(...args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(fx.emulator.requests).toHaveLength(0);
  });

  it('asks on a terminal, and rotates nothing when the answer is no, which is no failure', async () => {
    await setup('asked');
    const stdin = Object.assign(new PassThrough(), { isTTY: true });
    let stderr = '';
    let stdout = '';
    const running = run(['rotate', 'asked', '--revoke-now', '--config', 'rotation.yaml', '--dotenv', fx.envFile], {
      stdin,
      stdout: { write: (t: string) => (stdout += t) },
      stderr: { write: (t: string) => (stderr += t) },
      env: {},
      cwd: fx.dir,
    });
    setTimeout(() => stdin.write('n\n'), 50);
    expect(await running).toBe(0);
    expect(stderr).toContain('Rotate asked now? The current tokens stop working now (--revoke-now). [y/N]');
    expect(stderr).toContain('nothing done');
    expect(fx.emulator.requests).toHaveLength(0);
    fx.results.push({ code: 0, stdout, stderr });
  });
});

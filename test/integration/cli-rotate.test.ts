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
    const result = await rotate('leaked', '--revoke-now', '--reason', 'pasted in a public channel');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/leaked\s+rotated\s+\S+ -> \S+.*manual rotation: pasted in a public channel/);
    const [request] = sent();
    expect(Math.abs(Date.parse(request!.existingTokenExpiresAt) - request!.at)).toBeLessThan(1000);
    expect(fx.emulator.store.get(token.id)).toBeUndefined(); // the old token is gone at once
    expect(result.stderr).toMatch(/"reason":"pasted in a public channel".*"msg":"emergency rotation requested"/);
    expect(result.stderr).toMatch(/"step":"staged".*"reason":"manual rotation: pasted in a public channel"/);
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

  it('asks on a terminal, and rotates nothing when the answer is no', async () => {
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
    expect(await running).toBe(1);
    expect(stderr).toContain('Rotate asked now? The current tokens stop working now. [y/N]');
    expect(stderr).toContain('not rotated');
    expect(fx.emulator.requests).toHaveLength(0);
    fx.results.push({ code: 1, stdout, stderr });
  });
});

import { describe, expect, it } from 'vitest';

import type { Clock } from '../../src/clock.js';
import { type CliResult, runCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';

const HOUR = 3600_000;
const DAY = 24 * HOUR;

/** The service's own clock, `skewMs` off this machine's: it stamps its answers' `Date` with it. */
const skewedClock = (skewMs: number): Clock => ({ now: () => new Date(Date.now() + skewMs) });

/**
 * Expiry is the service's to enforce, on its clock. Times sent to it are computed on its clock
 * (from the `Date` of its answers), so a machine clock hours off neither revives a revoked token
 * nor kills an overlap.
 */
describe.each([
  ['2 h ahead of this machine', 2 * HOUR],
  ['2 h behind this machine', -2 * HOUR],
])('a service whose clock is %s', (_what, skewMs) => {
  const service = skewedClock(skewMs);
  const fx = useCliFixture({ emulator: { clock: service } });

  /** The command's result, and how long it took: the most its estimate of the service's clock can be off by transit. */
  async function cli(...args: string[]): Promise<CliResult & { tookMs: number }> {
    const started = Date.now();
    const result = await runCli([...args, '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir });
    fx.results.push(result);
    return { ...result, tookMs: Date.now() - started };
  }
  /**
   * How far a time the rotator computed on the service's clock may be from the service's own: half
   * the truncated second of a `Date` header, plus the answer's transit (at most the whole command).
   * A loaded machine widens it; a rotator that ignored the skew is 2 h off whatever the load.
   */
  const tolerance = (run: { tookMs: number }) => 500 + run.tookMs;
  const sent = () =>
    fx.emulator.requests
      .filter((r) => r.op === 'regenerate')
      .map((r) => ({ at: Date.parse(r.at), existing: Date.parse((r.body as { existingTokenExpiresAt: string }).existingTokenExpiresAt) }));

  async function token(name: string, expiresInMs: number) {
    const created = fx.emulator.store.add({ name, expiresAt: new Date(service.now().getTime() + expiresInMs) });
    await writePolicy(fx.dir, { version: 1, tokens: [{ name, id: created.id, sinks: [{ type: 'file', path: `secrets/${name}.token` }] }] });
    return created;
  }
  const alive = (id: string) => {
    const found = fx.emulator.store.all().find((t) => t.id === id);
    return found !== undefined && fx.emulator.store.isAlive(found);
  };

  it('a rotation gives the old token its whole overlap on the service clock, says the clock is off, and status shows it', async () => {
    const old = await token('overlapped', 2 * DAY);
    const run = await cli('once');
    expect(run.code, run.stderr).toBe(0);
    const [request] = sent();
    expect(Math.abs(request!.existing - request!.at - HOUR)).toBeLessThanOrEqual(tolerance(run));
    expect(alive(old.id)).toBe(true);
    expect(run.stderr).toMatch(/the token service's clock is 2h (ahead of|behind) this machine's/);

    const status = await cli('status');
    expect(status.stdout).toMatch(/clock: the token service's clock was 2h (ahead of|behind) this machine's/);
  });

  it('--revoke-now ends the old token now on the service clock', async () => {
    const old = await token('revoked', 60 * DAY);
    const run = await cli('rotate', 'revoked', '--revoke-now', '--yes');
    expect(run.code, run.stderr).toBe(0);
    const [request] = sent();
    expect(Math.abs(request!.existing - request!.at)).toBeLessThanOrEqual(tolerance(run));
    expect(
      fx.emulator.store
        .all()
        .find((t) => t.id === old.id)!
        .expiresAt!.getTime(),
    ).toBe(request!.existing);
  });
});

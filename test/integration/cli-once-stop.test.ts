import { describe, expect, it } from 'vitest';

import { type CliResult, seedSink, startCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';

const DAY = 24 * 3600_000;

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  if (!condition()) throw new Error(`timed out waiting for ${what}`);
}

describe('once stopped by SIGTERM, as a CronJob pod evicted mid-run is', () => {
  const fx = useCliFixture({ env: { ROTATOR_CONCURRENCY: '2' } });

  it('interrupts the 2 checks in flight, starts none of the other 4, reports no failure and exits 143', async () => {
    const tokens = [];
    for (let i = 0; i < 6; i++) {
      const token = fx.emulator.store.add({ name: `t${i}`, expiresAt: new Date(Date.now() + 60 * DAY) });
      await seedSink(fx.dir, `t${i}.token`, token.secret);
      tokens.push(token);
    }
    await writePolicy(fx.dir, {
      version: 1,
      tokens: tokens.map((t) => ({ name: t.name, id: t.id, sinks: [{ type: 'file', path: `${t.name}.token` }] })),
    });
    fx.emulator.faults.add({ op: 'retrieve', times: 100, action: { kind: 'hang', ms: 30_000 } });

    const { child, done } = startCli(['once', '--json', '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir });
    await until(() => fx.emulator.requests.length === 2, 'two checks to reach the service');
    child.kill('SIGTERM');
    const result: CliResult = await done;
    fx.results.push(result);

    expect(result.code, result.stderr).toBe(143);
    const run = JSON.parse(result.stdout) as { items: Array<{ name: string; result: string }> };
    expect(run.items.map((i) => i.result)).toEqual(Array(6).fill('interrupted'));
    expect(fx.emulator.requests, 'the 4 never started sent nothing').toHaveLength(2);
    expect(result.stderr).not.toMatch(/rotation failed/);
    expect(result.stderr).toMatch(/stopped: 4 of 6 tokens not checked/);
  }, 60_000);
});

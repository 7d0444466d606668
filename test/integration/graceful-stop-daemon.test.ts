import { describe, expect, it } from 'vitest';

import { readStateFiles, runCli, seedSink, startCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';

const DAY = 24 * 3600_000;
const TOKENS = 20;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The report, replayed: SIGTERM while the token service hangs, 20 tokens, 4 checked at a
 * time. Before, all 20 were logged as "rotation failed" (16 had not even started), counted as
 * failures (backoff at the next start) and made `status` exit 1.
 */
describe('daemon: a graceful stop is not a failure', () => {
  const fx = useCliFixture({
    env: () => ({ ROTATOR_LISTEN: '127.0.0.1:0', ROTATOR_CONCURRENCY: '4' }),
  });

  it('SIGTERM with a hung service: the 4 checks in flight are interrupted, the 16 waiting never start, nothing is counted as failed', async () => {
    const tokens = [];
    for (let i = 0; i < TOKENS; i++) {
      const token = fx.emulator.store.add({ name: `t${i}`, expiresAt: new Date(Date.now() + 60 * DAY) });
      await seedSink(fx.dir, `secrets/t${i}.token`, token.secret);
      tokens.push({ name: token.name!, id: token.id, sinks: [{ type: 'file', path: `secrets/t${i}.token` }] });
    }
    await writePolicy(fx.dir, { version: 1, tokens });
    const args = ['--config', 'rotation.yaml', '--dotenv', fx.envFile];
    // every name has a healthy record, as after a day of running
    const first = await runCli(['once', ...args], { cwd: fx.dir });
    fx.results.push(first);
    expect(first.code).toBe(0);

    fx.emulator.requests.length = 0;
    fx.emulator.faults.add({ op: 'retrieve', times: 1000, action: { kind: 'hang', ms: 60_000 } });
    const daemon = startCli(['daemon', ...args], { cwd: fx.dir });
    for (let waited = 0; fx.emulator.requests.length < 4 && waited < 40_000; waited += 50) await sleep(50);
    expect(fx.emulator.requests.length, 'the first checks to reach the service').toBeGreaterThanOrEqual(4);
    daemon.child.kill('SIGTERM');
    const stopped = await daemon.done;
    fx.results.push(stopped);

    expect(stopped.code).toBe(0);
    expect(fx.emulator.requests).toHaveLength(4); // the 16 waiting were never sent
    const lines = stopped.stderr.split('\n').filter(Boolean);
    expect(lines.filter((l) => l.includes('rotation failed'))).toEqual([]);
    expect(lines.filter((l) => l.includes('"level":"error"') || l.includes('"level":50'))).toEqual([]);
    expect(lines.filter((l) => l.includes('its check was interrupted by the stop'))).toHaveLength(4);
    expect(stopped.stderr).toMatch(/"msg":"stopping: 4 checks in progress finish, 16 waiting are not started"/);
    expect(stopped.stderr).toMatch(/"msg":"16 checks not started because of the stop"/);

    // no failure in any record: no backoff at the next start, and `status` is healthy
    const records = Object.entries(await readStateFiles(fx.dir)).filter(([path]) => path.includes('tokens/'));
    expect(records).toHaveLength(TOKENS);
    for (const [, text] of records) expect(JSON.parse(text)).toMatchObject({ consecutiveFailures: 0, lastFailure: null });
    const status = await runCli(['status', ...args], { cwd: fx.dir });
    fx.results.push(status);
    expect(status.code).toBe(0);
    // Generous: a busy CI machine starts processes slowly; the stop itself has its own deadline.
  }, 90_000);
});

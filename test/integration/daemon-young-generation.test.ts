import { describe, expect, it } from 'vitest';

import { seedSink, startCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { freePort } from '../helpers/free-port.js';

const DAY = 24 * 3600_000;
const MiB = 1024 * 1024;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The young generation's capacity (both semi-spaces) as the daemon reports it, once it has checked. */
async function newSpaceAfterFirstCheck(url: string, timeoutMs = 25_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = await fetch(`${url}/metrics`)
      .then((r) => r.text())
      .catch(() => '');
    const checked = /^token_rotator_token_expiry_timestamp_seconds\{token="t0"\} /m.test(text);
    const newSpace = /^nodejs_heap_space_size_total_bytes\{space="new"\} (\d+)$/m.exec(text);
    if (checked && newSpace) return Number(newSpace[1]);
    if (Date.now() > deadline) throw new Error('the daemon did not report its first check in time');
    await sleep(100);
  }
}

describe('the daemon keeps its young generation small (resident memory while idle)', () => {
  let port = 0;
  const fx = useCliFixture({
    env: async () => {
      port = await freePort();
      return { ROTATOR_LISTEN: `127.0.0.1:${port}` };
    },
  });

  async function daemonNewSpace(env: Record<string, string> = {}): Promise<number> {
    const tokens = Array.from({ length: 20 }, (_, i) =>
      fx.emulator.store.add({ name: `t${i}`, expiresAt: new Date(Date.now() + 60 * DAY) }),
    );
    for (const [i, token] of tokens.entries()) await seedSink(fx.dir, `secrets/t${i}.token`, token.secret);
    await writePolicy(fx.dir, {
      version: 1,
      defaults: { schedule: '0 * * * *' },
      tokens: tokens.map((token, i) => ({ name: `t${i}`, id: token.id, sinks: [{ type: 'file', path: `secrets/t${i}.token` }] })),
    });
    const { child, done } = startCli(['daemon', '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir, env });
    try {
      return await newSpaceAfterFirstCheck(`http://127.0.0.1:${port}`);
    } finally {
      child.kill('SIGTERM');
      fx.results.push(await done);
    }
  }

  it('without any flag: the young generation stays at its starting size (V8 grows it to 32 MB by itself)', async () => {
    expect(await daemonNewSpace()).toBeLessThanOrEqual(4 * MiB);
  });

  it("a semi-space flag of the user's wins", async () => {
    expect(await daemonNewSpace({ NODE_OPTIONS: '--max-semi-space-size=16' })).toBeGreaterThan(4 * MiB);
  });
});

import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { describe, expect, it } from 'vitest';

import { runCli, seedSink, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';

const DAY = 24 * 3600_000;
const MiB = 1024 * 1024;

/** Loaded with --import: writes the young generation's capacity (both semi-spaces) when the process exits. */
const PROBE = `import { writeFileSync } from 'node:fs';
import { getHeapSpaceStatistics } from 'node:v8';
process.on('exit', () => {
  const space = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
  writeFileSync(process.env.NEW_SPACE_OUT, String(space.space_size));
});
`;

describe('plan keeps its young generation small (peak memory over thousands of tokens)', () => {
  const fx = useCliFixture();

  async function planNewSpace(nodeOptions = ''): Promise<number> {
    const tokens = Array.from({ length: 200 }, (_, i) =>
      fx.emulator.store.add({ name: `t${i}`, expiresAt: new Date(Date.now() + 60 * DAY) }),
    );
    for (const [i, token] of tokens.entries()) await seedSink(fx.dir, `secrets/t${i}.token`, token.secret);
    await writePolicy(fx.dir, {
      version: 1,
      tokens: tokens.map((token, i) => ({ name: `t${i}`, id: token.id, sinks: [{ type: 'file', path: `secrets/t${i}.token` }] })),
    });
    const probe = join(fx.dir, 'new-space-probe.mjs');
    await writeFile(probe, PROBE);
    const out = join(fx.dir, 'new-space');
    const result = await runCli(['plan', '--json', '--config', 'rotation.yaml', '--dotenv', fx.envFile], {
      cwd: fx.dir,
      env: { NODE_OPTIONS: `--import=${pathToFileURL(probe).href} ${nodeOptions}`, NEW_SPACE_OUT: out },
    });
    fx.results.push(result);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).summary).toMatchObject({ total: 200, skip: 200 });
    return Number(await readFile(out, 'utf8'));
  }

  it('without any flag: the young generation stays at its starting size (V8 grows it to 2 × 32 MB by itself)', async () => {
    expect(await planNewSpace()).toBeLessThanOrEqual(4 * MiB);
  });

  it("a semi-space flag of the user's wins", async () => {
    expect(await planNewSpace('--max-semi-space-size=16')).toBeGreaterThan(4 * MiB);
  });
});

import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { expect, it } from 'vitest';

import type { StatusItem } from '../../src/cli/output/status-items.js';
import { runCli, startCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { itemsOf } from '../helpers/output-items.js';

const DAY = 24 * 3600_000;
const fx = useCliFixture();

async function cli(args: string[], env: Record<string, string> = {}) {
  const result = await runCli([...args, '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir, env });
  fx.results.push(result);
  return result;
}

it('status tells, without the network, what happened and what is next for each token', async () => {
  const fine = fx.emulator.store.add({ name: 'fine', expiresAt: new Date(Date.now() + 2 * DAY) });
  const stuck = fx.emulator.store.add({ name: 'stuck', expiresAt: new Date(Date.now() + 2 * DAY) });
  const refused = fx.emulator.store.add({ name: 'refused', expiresAt: new Date(Date.now() + 2 * DAY) });
  await writePolicy(fx.dir, {
    version: 1,
    tokens: [
      { name: 'fine', id: fine.id, sinks: [{ type: 'file', path: 'secrets/fine.token' }] },
      {
        name: 'stuck',
        id: stuck.id,
        sinks: [
          { type: 'file', path: 'secrets/stuck.token' },
          { type: 'file', path: 'blocked/stuck.token' },
        ],
      },
      { name: 'refused', id: refused.id, sinks: [{ type: 'file', path: 'secrets/refused.token' }] },
    ],
  });
  fx.emulator.faults.add({ op: 'regenerate', id: refused.id, action: { kind: 'status', status: 403, message: 'forbidden' } });
  // `stuck`'s second sink passes its preflight, then breaks while the service answers slowly.
  fx.emulator.faults.add({ op: 'regenerate', id: stuck.id, action: { kind: 'hang', ms: 5_000, commit: true } });
  const once = startCli(['once', '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir });
  await expect
    .poll(() => fx.emulator.requests.some((r) => r.op === 'regenerate' && r.id === stuck.id), { timeout: 60_000, interval: 20 })
    .toBe(true);
  await writeFile(join(fx.dir, 'blocked'), 'a file in the way');
  const result = await once.done;
  fx.results.push(result);
  expect(result.code).toBe(1);

  // the service is gone: status still answers
  await writeFile(fx.envFile, (await readFile(fx.envFile, 'utf8')).replace(/ROTATOR_API_URL=.*/, 'ROTATOR_API_URL=http://127.0.0.1:9'));
  const status = await cli(['status', '--json']);
  expect(status.code).toBe(1);
  const rows = Object.fromEntries((itemsOf(status.stdout) as StatusItem[]).map((r) => [r.name, r]));
  expect(rows.fine).toMatchObject({ pending: [], lastError: null, consecutiveFailures: 0 });
  expect(rows.fine!.id).not.toBe(fine.id);
  expect(Date.parse(rows.fine!.dueAt!) - Date.now()).toBeGreaterThan(22 * DAY);
  expect(rows.stuck!.pending).toEqual(['file blocked/stuck.token']);
  expect(rows.refused).toMatchObject({
    id: refused.id,
    consecutiveFailures: 1,
    lastError: expect.objectContaining({ code: 'ERR_API', message: expect.stringMatching(/answered 403: forbidden/) }),
  });
  expect(rows.refused!.backoffUntil).not.toBeNull();

  const table = await cli(['status']);
  expect(table.stdout).toMatch(/^TOKEN\s+ID\s+HEALTH\s+EXPIRES\s+LAST ROTATED\s+NEXT DUE\s+PENDING\s+DRIFT\s+LAST ERROR\n/);
  expect(table.stdout).toMatch(/stuck\s+.*file blocked\/stuck.token/);
});

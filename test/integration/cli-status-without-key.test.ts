import { rm } from 'node:fs/promises';
import { join } from 'node:path';

import { expect, it } from 'vitest';

import type { StatusItem } from '../../src/cli/output/status-items.js';
import { runCli, startCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { itemsOf } from '../helpers/output-items.js';
import { stateOnlyEnv } from '../helpers/state-only-env.js';

const DAY = 24 * 3600_000;
const fx = useCliFixture();

/** Two tokens rotated for real by `once`, with the state key the fixture's env file holds. */
async function rotatedTwo() {
  const ingest = fx.emulator.store.add({ name: 'ingest', expiresAt: new Date(Date.now() + 2 * DAY) });
  const query = fx.emulator.store.add({ name: 'query', expiresAt: new Date(Date.now() + 2 * DAY) });
  await writePolicy(fx.dir, {
    version: 1,
    tokens: [
      { name: 'ingest', id: ingest.id, sinks: [{ type: 'file', path: 'secrets/ingest.token' }] },
      { name: 'query', id: query.id, sinks: [{ type: 'file', path: 'secrets/query.token' }] },
    ],
  });
  const once = await fx.cli('once');
  expect(once.code, once.stderr).toBe(0);
  return { ingest, query };
}

async function status(envFile: string, ...args: string[]) {
  const result = await runCli(['status', ...args, '--config', 'rotation.yaml', '--dotenv', envFile], { cwd: fx.dir });
  fx.results.push(result);
  return result;
}

it('status reads a rotated state with no state key and no service settings: what it shows is not authenticated, said once, and no token is failed for it', async () => {
  const { ingest } = await rotatedTwo();
  const bare = await stateOnlyEnv(fx.dir, fx.envFile);

  const json = await status(bare, '--json');
  expect(json.stderr).not.toMatch(/ROTATOR_STATE_KEY|ROTATOR_API_URL|ROTATOR_OAUTH/);
  expect(json.code, json.stderr).toBe(0);
  const rows = Object.fromEntries((itemsOf(json.stdout, 'Status') as StatusItem[]).map((r) => [r.name, r]));
  expect(rows.ingest).toMatchObject({ health: 'ok', authenticated: false, driftKnown: false, drift: [], pending: [], lastError: null });
  expect(rows.ingest!.id).not.toBe(ingest.id);
  // A gate on needsAttention alone would pass without having compared a sink: the summary says so.
  expect(JSON.parse(json.stdout).summary).toMatchObject({ needsAttention: 0, driftNotKnown: Object.keys(rows).length });
  expect(rows.ingest!.lastRotatedAt).not.toBeNull();
  expect(Date.parse(rows.ingest!.dueAt!)).toBeGreaterThan(Date.now());

  const table = await status(bare);
  expect(table.code).toBe(0);
  expect(table.stdout.match(/state not authenticated: ROTATOR_STATE_KEY is not set/g)).toHaveLength(1);
  expect(table.stdout).toMatch(/ingest\s.*not known without the state key/);

  // With the key, the same state is authenticated and every sink compared.
  const keyed = await status(await stateOnlyEnv(fx.dir, fx.envFile, { withKey: true }), '--json');
  expect(keyed.code, keyed.stderr).toBe(0);
  expect(itemsOf(keyed.stdout)).toEqual(
    expect.arrayContaining([expect.objectContaining({ name: 'ingest', authenticated: true, driftKnown: true })]),
  );
  expect(keyed.stdout).not.toContain('not authenticated');
  expect(JSON.parse(keyed.stdout).summary).toMatchObject({ driftNotKnown: 0 });
});

it('without the key, drift that needs no key is still found: a removed sink is missing', async () => {
  await rotatedTwo();
  await rm(join(fx.dir, 'secrets/query.token'));
  const result = await status(await stateOnlyEnv(fx.dir, fx.envFile), '--json');
  expect(result.code).toBe(1);
  const rows = Object.fromEntries((itemsOf(result.stdout) as StatusItem[]).map((r) => [r.name, r]));
  expect(rows.query).toMatchObject({ health: 'attention', drift: [expect.objectContaining({ kind: 'missing' })] });
  expect(rows.ingest).toMatchObject({ health: 'ok', drift: [] });
});

it('--name shows only the names given (repeatable, comma lists); an unknown one is a usage error naming it, with the closest name', async () => {
  await rotatedTwo();
  const bare = await stateOnlyEnv(fx.dir, fx.envFile);
  const one = await status(bare, '--json', '--name', 'query');
  expect(one.code, one.stderr).toBe(0);
  expect((itemsOf(one.stdout) as StatusItem[]).map((i) => i.name)).toEqual(['query']);
  const both = await status(bare, '--json', '--name', 'query,ingest');
  expect((itemsOf(both.stdout) as StatusItem[]).map((i) => i.name)).toEqual(['ingest', 'query']);
  const repeated = await status(bare, '--json', '--name', 'query', '--name', 'ingest');
  expect((itemsOf(repeated.stdout) as StatusItem[]).map((i) => i.name)).toEqual(['ingest', 'query']);

  const typo = await status(bare, '--name', 'ingets');
  expect(typo.code).toBe(2);
  expect(typo.stderr).toContain('--name ingets');
  expect(typo.stderr).toContain('did you mean "ingest"?');
  expect(typo.stdout).toBe('');
  const far = await status(bare, '--name', 'billing');
  expect(far.code).toBe(2);
  expect(far.stderr).toMatch(/no token named "billing".*known: ingest, query/);
});

it('--json --watch prints one compact envelope per line until SIGTERM or SIGINT, then exits 0', async () => {
  await rotatedTwo();
  const bare = await stateOnlyEnv(fx.dir, fx.envFile);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    const watch = startCli(['status', '--json', '--watch', '1', '--name', 'ingest', '--config', 'rotation.yaml', '--dotenv', bare], {
      cwd: fx.dir,
    });
    let out = '';
    watch.child.stdout!.on('data', (chunk) => (out += String(chunk)));
    await expect.poll(() => out.split('\n').filter(Boolean).length, { timeout: 60_000, interval: 50 }).toBeGreaterThanOrEqual(2);
    watch.child.kill(signal);
    const result = await watch.done;
    fx.results.push(result);
    expect(result.code, `${signal}: ${result.stderr}`).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines.at(-1), 'ends with a whole line').toBe('');
    for (const line of lines.slice(0, -1)) {
      const document = JSON.parse(line) as { kind: string; summary: object; items: StatusItem[] };
      expect(document).toMatchObject({ apiVersion: 'token-rotator/v2', kind: 'Status', summary: { total: 1, ok: 1 } });
      expect(document.items.map((i) => i.name)).toEqual(['ingest']);
    }
  }
});

it('--watch is refused with exit 2 when it is not a number of seconds or a duration of a second or more', async () => {
  await writePolicy(fx.dir, { version: 1, tokens: [{ name: 'a', id: 'a1', sinks: [{ type: 'file', path: 's/a.token' }] }] });
  const bare = await stateOnlyEnv(fx.dir, fx.envFile);
  for (const value of ['soon', '0', '500ms']) {
    const result = await status(bare, '--watch', value);
    expect(result.code, value).toBe(2);
    expect(result.stderr, value).toMatch(/--watch: .*give seconds \(5\) or a duration/);
  }
});

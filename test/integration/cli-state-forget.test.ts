import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';

import { expect, it } from 'vitest';
import { parse } from 'yaml';

import { run } from '../../src/cli/run.js';
import { runCli, startCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { journalEntry } from '../helpers/journal-entries.js';
import { itemsOf } from '../helpers/output-items.js';
import { stateOnlyEnv } from '../helpers/state-only-env.js';

const DAY = 24 * 3600_000;
const fx = useCliFixture();

const exists = (path: string) =>
  access(join(fx.dir, path)).then(
    () => true,
    () => false,
  );

async function policyOf(...names: string[]) {
  const tokens = names.map((name) => ({ name, token: fx.emulator.store.add({ name, expiresAt: new Date(Date.now() + 2 * DAY) }) }));
  await writePolicy(fx.dir, {
    version: 1,
    tokens: tokens.map(({ name, token }) => ({ name, id: token.id, sinks: [{ type: 'file', path: `secrets/${name}.token` }] })),
  });
  return tokens.map((t) => t.token);
}

/** `state forget` as on-call would run it: with where the state is, no state key, no service settings. */
async function forget(...args: string[]) {
  const result = await runCli(
    ['state', 'forget', ...args, '--config', 'rotation.yaml', '--dotenv', await stateOnlyEnv(fx.dir, fx.envFile)],
    {
      cwd: fx.dir,
    },
  );
  fx.results.push(result);
  return result;
}

it('forgets a rotated name with --yes, without the state key or service settings: the next status knows nothing of it', async () => {
  await policyOf('ingest', 'query');
  expect((await fx.cli('once')).code).toBe(0);
  expect(await exists('state/tokens/ingest.json')).toBe(true);

  const result = await forget('ingest', '--yes');
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toMatch(/^forgot ingest: its record and journal entry are gone from file /);
  expect(await exists('state/tokens/ingest.json')).toBe(false);
  expect(await exists('state/tokens/query.json'), 'another name is kept').toBe(true);

  const status = await fx.cli('status', '--json');
  const rows = Object.fromEntries(itemsOf(status.stdout).map((r: { name: string; health: string }) => [r.name, r.health]));
  expect(rows).toEqual({ ingest: 'unknown', query: 'ok' });

  const again = await forget('ingest', '--yes');
  expect(again.code).toBe(0);
  expect(again.stdout).toMatch(/^nothing saved for ingest in file /);
});

it('refuses without a terminal and without --yes (exit 2), before reading anything, and leaves the state as it was', async () => {
  await policyOf('ingest');
  expect((await fx.cli('once')).code).toBe(0);
  const before = await readFile(join(fx.dir, 'state/tokens/ingest.json'), 'utf8');
  const result = await forget('ingest');
  expect(result.code).toBe(2);
  expect(result.stderr).toContain('state forget: asks for confirmation on a terminal; add --yes');
  expect(await readFile(join(fx.dir, 'state/tokens/ingest.json'), 'utf8')).toBe(before);
});

it('on a terminal, asks first and says what is lost (never the secret); no keeps everything, yes forgets', async () => {
  await policyOf('ingest');
  expect((await fx.cli('once')).code).toBe(0);
  const bare = await stateOnlyEnv(fx.dir, fx.envFile);
  for (const answer of ['n', 'y']) {
    const stdin = Object.assign(new PassThrough(), { isTTY: true });
    let stdout = '';
    let stderr = '';
    const running = run(['state', 'forget', 'ingest', '--config', 'rotation.yaml', '--dotenv', bare], {
      stdin,
      stdout: { write: (t: string) => (stdout += t) },
      stderr: { write: (t: string) => (stderr += t) },
      env: {},
      cwd: fx.dir,
    });
    setTimeout(() => stdin.write(`${answer}\n`), 50);
    expect(await running, stderr).toBe(0);
    fx.results.push({ code: 0, stdout, stderr });
    expect(stderr).toMatch(/Forget the saved state of ingest in file .*\? This loses:\n/);
    expect(stderr).toContain('the current secret it holds: a sink that loses it can no longer be repaired without regenerating');
    expect(stderr).toMatch(/the next run takes the policy's id \(.+\) as current/);
    expect(await exists('state/tokens/ingest.json'), `after ${answer}`).toBe(answer === 'n');
    if (answer === 'n') expect(stderr).toContain('nothing done');
  }
});

it('refuses while a staged secret waits in the journal, saying how to deliver it; once delivered, forgets', async () => {
  await policyOf('ingest');
  const killed = await runCli(['once', '--config', 'rotation.yaml', '--dotenv', fx.envFile], {
    cwd: fx.dir,
    env: { ROTATOR_TEST_FAILPOINT: 'staged' },
  });
  fx.results.push(killed);
  expect(killed.signal).toBe('SIGKILL');
  const entry = await journalEntry(join(fx.dir, 'state'), 'ingest');
  expect(entry).toMatchObject({ phase: 'staged' });

  const refused = await forget('ingest', '--yes');
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(
    /not forgetting 'ingest': its journal holds a staged new secret \(token \S+\) not yet delivered everywhere/,
  );
  expect(refused.stderr).toContain('`token-rotator once` (or `token-rotator rotate ingest`) resumes the rotation and delivers it');
  expect(await journalEntry(join(fx.dir, 'state'), 'ingest')).toEqual(entry);

  expect((await fx.cli('once')).code).toBe(0);
  expect((await forget('ingest', '--yes')).code).toBe(0);
  expect(await journalEntry(join(fx.dir, 'state'), 'ingest')).toBeUndefined();
});

it('refuses while a rotation holds the name, naming the holder', async () => {
  const [token] = await policyOf('ingest');
  fx.emulator.faults.add({ op: 'regenerate', id: token!.id, action: { kind: 'hang', ms: 5_000, commit: true } });
  const once = startCli(['once', '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir });
  await expect
    .poll(() => fx.emulator.requests.some((r) => r.op === 'regenerate' && r.id === token!.id), { timeout: 60_000, interval: 20 })
    .toBe(true);
  const refused = await forget('ingest', '--yes');
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(/'ingest' is being rotated by another process \(.+\): nothing was forgotten/);
  const done = await once.done;
  fx.results.push(done);
  expect(done.code, done.stderr).toBe(0);
  expect(await exists('state/tokens/ingest.json')).toBe(true);
});

it('forgets a name no longer in the policy', async () => {
  await policyOf('ingest', 'gone');
  expect((await fx.cli('once')).code).toBe(0);
  const policy = await readFile(join(fx.dir, 'rotation.yaml'), 'utf8');
  const { tokens } = parse(policy) as { tokens: object[] };
  await writePolicy(fx.dir, { version: 1, tokens: [tokens[0]] });
  const result = await forget('gone', '--yes');
  expect(result.code, result.stderr).toBe(0);
  expect(await exists('state/tokens/gone.json')).toBe(false);
  expect(await exists('state/tokens/ingest.json')).toBe(true);
});

it('a name neither in the policy nor saved is a usage error with the closest name, not "nothing saved"', async () => {
  await policyOf('ingest');
  expect((await fx.cli('once')).code).toBe(0);
  const result = await forget('ingset', '--yes');
  expect(result.code).toBe(2);
  expect(result.stderr).toMatch(/"ingset".*did you mean "ingest"/s);
  expect(await exists('state/tokens/ingest.json')).toBe(true);
});

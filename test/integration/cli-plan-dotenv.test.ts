import { appendFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, expect, it } from 'vitest';

import { startVaultDouble, type VaultDouble } from '../doubles/vault/start-vault-double.js';
import { sinkPolicy } from '../doubles/vault/vault-here.js';
import { type CliResult, runCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { expectNoLeak } from '../helpers/leaks.js';
import { itemsOf } from '../helpers/output-items.js';

/*
 * `plan` reads the sinks back, so their credentials must come from the environment the command was
 * configured with: the process's, merged with `--dotenv FILE` and every `NAME_FILE`. A Vault token
 * given only in the dotenv file (or through VAULT_TOKEN_FILE named there) must reach the Vault sink.
 */

const DAY = 24 * 3600_000;

let vault: VaultDouble;
let vaultToken: string;

beforeAll(async () => {
  vault = await startVaultDouble();
  vault.mount('secret');
  vault.policy('token-rotator', sinkPolicy('secret', 'apps/*'));
  vaultToken = vault.token({ policies: ['token-rotator'] });
});
afterAll(() => vault.close());

const fx = useCliFixture();
let tokens = 0;

async function cli(...args: string[]): Promise<CliResult> {
  // No VAULT_TOKEN in the process environment: the dotenv file is its only source.
  const result = await runCli([...args, '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir });
  fx.results.push(result);
  return result;
}

const givenIn = {
  'the dotenv file': async () => `VAULT_TOKEN=${vaultToken}\n`,
  'a VAULT_TOKEN_FILE named in the dotenv file': async () => {
    const file = join(fx.dir, 'vault-token');
    await writeFile(file, vaultToken, { mode: 0o600 });
    return `VAULT_TOKEN_FILE=${file}\n`;
  },
};

/** A new token, not due, whose one sink is a Vault path of its own: the whole policy. */
async function tokenWithVaultSink() {
  const token = fx.emulator.store.add({ name: `ingest-${++tokens}`, expiresAt: new Date(Date.now() + 60 * DAY) });
  await writePolicy(fx.dir, {
    version: 1,
    tokens: [{ name: token.name, id: token.id, sinks: [{ type: 'vault', address: vault.url, path: `apps/${token.name}` }] }],
  });
  return token;
}

it.each(Object.keys(givenIn) as Array<keyof typeof givenIn>)('plan reads a Vault sink with the token given in %s', async (where) => {
  await appendFile(fx.envFile, await givenIn[where]());
  const token = await tokenWithVaultSink();
  // `once` fills the empty Vault path (it already reads the dotenv file's credentials)...
  const once = await cli('once');
  expect(once.code, once.stderr).toBe(0);
  expect(vault.kv.get({ path: `apps/${token.name}` })?.currentVersion).toBe(1);

  // ...so `plan` finds Vault in step, when it can read it with the same credentials.
  const plan = await cli('plan', '--json');
  expect(plan.code, plan.stderr).toBe(0);
  const [item, ...others] = itemsOf(plan.stdout, 'PlanResult');
  expect(others).toEqual([]);
  expect(item).toMatchObject({ name: token.name, action: 'skip', result: 'ok' });
  // Not `unreadable` drift with "no Vault token: VAULT_TOKEN (or VAULT_TOKEN_FILE) is not set".
  expect(item.drift).toEqual([]);
  expectNoLeak({ 'once stderr': once.stderr, 'plan stdout': plan.stdout, 'plan stderr': plan.stderr }, [vaultToken]);
});

it('plan exits 1, as once does, when a sink cannot be read: the plan of that token is not whole', async () => {
  await appendFile(fx.envFile, `VAULT_TOKEN=${vaultToken}\n`);
  const token = await tokenWithVaultSink();
  const first = await cli('once');
  expect(first.code, first.stderr).toBe(0);

  // Vault's operator takes read away: the rotator can no longer tell what the sink holds.
  vault.policy('token-rotator', `path "secret/data/apps/*" {\n  capabilities = ["create", "update"]\n}\n`);
  try {
    const plan = await cli('plan', '--json');
    const [item] = itemsOf(plan.stdout, 'PlanResult');
    expect(item).toMatchObject({ name: token.name, action: 'skip', drift: [expect.objectContaining({ kind: 'unreadable' })] });
    expect(plan.code).toBe(1);
    const once = await cli('once');
    expect(once.code).toBe(1);
  } finally {
    vault.policy('token-rotator', sinkPolicy('secret', 'apps/*'));
  }
});

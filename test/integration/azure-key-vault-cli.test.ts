import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { AppRegistration } from '../doubles/azure-key-vault/entra-id.js';
import { clientSecretEnv } from '../doubles/azure-key-vault/in-process.js';
import { type AzureKeyVaultDouble, startAzureKeyVaultDouble } from '../doubles/azure-key-vault/start-azure-key-vault-double.js';
import { type CliResult, runCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { expectNoLeak } from '../helpers/leaks.js';
import { itemsOf } from '../helpers/output-items.js';

/*
 * The built CLI in a child process, as a new user runs it: the Azure SDK trusts the double's
 * self-signed CA because NODE_EXTRA_CA_CERTS names it (Node reads it at start), reaches
 * https://myvault.vault.azure.net and login.microsoftonline.com through HTTPS_PROXY, and takes its
 * credential from the environment (AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET).
 */

const DAY = 24 * 3600_000;
const inDays = (d: number) => new Date(Date.now() + d * DAY);

let double: AzureKeyVaultDouble;
let app: AppRegistration;

beforeAll(async () => {
  double = await startAzureKeyVaultDouble();
  app = double.registerApp({ clientSecret: true });
});
afterAll(async () => {
  await double?.close();
});

describe('azure-key-vault through the CLI, trusting the vault by NODE_EXTRA_CA_CERTS', () => {
  const fx = useCliFixture();

  /** The process environment of each run: the Azure SDK reads its settings there, not from the dotenv file. */
  async function azureEnv(extra: Record<string, string> = {}): Promise<Record<string, string>> {
    const caFile = join(fx.dir, 'azure-double-ca.pem');
    await writeFile(caFile, double.ca);
    return { ...clientSecretEnv(double, app), NODE_EXTRA_CA_CERTS: caFile, ...extra };
  }
  async function cli(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
    const result = await runCli([...args, '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir, env });
    fx.results.push(result);
    return result;
  }
  async function whoami(secret: string | undefined) {
    const response = await fetch(`${fx.emulator.apiUrl}/_emulator/whoami`, { headers: { authorization: `Bearer ${secret}` } });
    return response.ok ? ((await response.json()) as { id: string; name: string }) : undefined;
  }
  const writes = (since: number) => double.requests.slice(since).filter((r) => r.method === 'PUT' || r.method === 'PATCH');

  it('validates online, delivers a new version with its marker, changes nothing on a second run, and heals an edited secret', async () => {
    const token = fx.emulator.store.add({ name: 'ingest', expiresAt: inDays(60) });
    const sink = {
      type: 'azure-key-vault',
      vaultUrl: 'https://myvault.vault.azure.net',
      name: 'ingest-token',
      contentType: 'text/plain',
      tags: { team: 'ingest' },
    };
    await writePolicy(fx.dir, { version: 1, tokens: [{ name: 'ingest', id: token.id, sinks: [sink] }] });
    const env = await azureEnv();

    const validate = await cli(env, 'validate', '--online');
    expect(validate.code, validate.stderr + validate.stdout).toBe(0);
    expect(double.versions('ingest-token')).toEqual([]);

    // First run: the secret is missing (drift on a sink new in the policy), so the token is rotated to fill it.
    const first = await cli(env, 'once', '--json');
    expect(first.code, first.stderr).toBe(0);
    const [outcome] = itemsOf(first.stdout) as Array<{ action: string; newId: string; sinks: unknown[] }>;
    expect(outcome).toMatchObject({
      action: 'rotate',
      sinks: [
        {
          type: expect.any(String),
          target: expect.any(String),
          description: 'azure-key-vault myvault.vault.azure.net/secrets/ingest-token',
          result: 'created',
        },
      ],
    });
    const [version] = double.versions('ingest-token');
    expect(await whoami(version!.value)).toMatchObject({ id: outcome!.newId, name: 'ingest' });
    expect(version).toMatchObject({
      contentType: 'text/plain',
      tags: { team: 'ingest', 'managed-by': 'token-rotator', 'token-name': 'ingest', 'token-id': outcome!.newId },
    });
    const newToken = fx.emulator.store.all().find((t) => t.id === outcome!.newId)!;
    expect(version!.exp).toBe(Math.floor(newToken.expiresAt!.getTime() / 1000));

    // Second run: nothing is due, nothing is written.
    const before = double.requests.length;
    const second = await cli(env, 'once', '--json');
    expect(second.code, second.stderr).toBe(0);
    expect(itemsOf(second.stdout)[0]).toMatchObject({ action: 'skip' });
    expect(writes(before)).toEqual([]);
    expect(double.versions('ingest-token')).toHaveLength(1);

    // Someone adds a version by hand that keeps the tags but not the secret: drift, found and healed.
    double.plant('ingest-token', { value: 'edited-by-hand', tags: version!.tags!, contentType: 'text/plain' });
    const third = await cli(env, 'once', '--json');
    expect(third.code, third.stderr).toBe(0);
    const latest = double.versions('ingest-token').at(-1)!;
    expect(latest.value).not.toBe('edited-by-hand');
    expect(await whoami(latest.value)).toMatchObject({ name: 'ingest' });
    expect(latest.tags?.['managed-by']).toBe('token-rotator');

    expectNoLeak(
      Object.fromEntries(
        fx.results.flatMap((r, i) => [
          [`run ${i} stdout`, r.stdout],
          [`run ${i} stderr`, r.stderr],
        ]),
      ),
      [app.clientSecret!, ...double.versions('ingest-token').map((v) => v.value)],
    );
  });

  it('reports the vault unreachable, with what to do, when the CA is not given; the next run with it delivers', async () => {
    const token = fx.emulator.store.add({ name: 'untrusted', expiresAt: inDays(60) });
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [
        {
          name: 'untrusted',
          id: token.id,
          sinks: [{ type: 'azure-key-vault', vaultUrl: 'https://myvault.vault.azure.net', name: 'untrusted' }],
        },
      ],
    });
    const { NODE_EXTRA_CA_CERTS: _omitted, ...withoutCa } = await azureEnv();
    const failed = await cli(withoutCa, 'once');
    expect(failed.code).toBe(1);
    expect(failed.stderr + failed.stdout).toMatch(
      /azure-key-vault myvault\.vault\.azure\.net\/secrets\/untrusted: cannot reach .*NODE_EXTRA_CA_CERTS/,
    );
    expect(double.versions('untrusted')).toEqual([]);

    const retried = await cli(await azureEnv(), 'once', '--json');
    expect(retried.code, retried.stderr).toBe(0);
    expect(double.versions('untrusted')).toHaveLength(1);
  });
});

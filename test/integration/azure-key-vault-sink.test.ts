import { randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inspect } from 'node:util';

import { DefaultAzureCredential } from '@azure/identity';
import { SecretClient } from '@azure/keyvault-secrets';
import { setLogLevel } from '@azure/logger';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { SinkError } from '../../src/errors.js';
import { Secret } from '../../src/secret.js';
import { type AzureKeyVaultSinkConfig, azureKeyVaultSinkType } from '../../src/sinks/azure-key-vault/azure-key-vault-sink.js';
import type { SinkClient, TokenMeta } from '../../src/sinks/sink.js';
import { sinkContract } from '../contracts/sink-contract.js';
import type { AppRegistration } from '../doubles/azure-key-vault/entra-id.js';
import {
  AZURE_VARIABLES_CLEARED,
  clientSecretEnv,
  setProcessEnv,
  trustCa,
  workloadIdentityEnv,
} from '../doubles/azure-key-vault/in-process.js';
import { type AzureKeyVaultDouble, startAzureKeyVaultDouble } from '../doubles/azure-key-vault/start-azure-key-vault-double.js';
import { expectNoLeak } from '../helpers/leaks.js';
import { rawLog } from '../helpers/raw-log.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/*
 * The azure-key-vault sink against the Key Vault and Entra ID double, driven by the real
 * @azure/keyvault-secrets and @azure/identity: every call goes through the SDK's pipeline (bearer
 * challenge, DefaultAzureCredential, the HTTPS_PROXY setting, TLS with the double's CA).
 */

let double: AzureKeyVaultDouble;
let app: AppRegistration;
let dir: string;
const undo: Array<() => void> = [];
let count = 0;

beforeAll(async () => {
  dir = await makeTempDir();
  double = await startAzureKeyVaultDouble({
    vaults: [
      { name: 'myvault' },
      { name: 'policyvault', permissionModel: 'accessPolicy' },
      { name: 'foreignvault', tenantId: randomUUID() },
    ],
  });
  app = double.registerApp({ clientSecret: true, serviceAccount: 'system:serviceaccount:token-rotator:token-rotator' });
  undo.push(trustCa(double.ca), setProcessEnv({ ...AZURE_VARIABLES_CLEARED, ...clientSecretEnv(double, app) }));
});
afterAll(async () => {
  for (const step of undo.reverse()) step();
  await double?.close();
  await rm(dir, { recursive: true, force: true });
});

function configOf(raw: Record<string, unknown>): AzureKeyVaultSinkConfig {
  const parsed = azureKeyVaultSinkType.parse({ type: 'azure-key-vault', vaultUrl: double.vaultUrl(), ...raw }, { policyDir: dir });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.config;
}

sinkContract('azure-key-vault', { ownership: 'marker', preflight: true }, () => ({
  type: azureKeyVaultSinkType,
  // Credentials come from DefaultAzureCredential's chain (here the environment's client secret), never by reference.
  context: { env: process.env, reference: () => undefined },
  config: () => configOf({ name: `contract-${++count}`, contentType: 'text/plain' }),
  carriesMetadata: () => true,
  async plantForeign(config, secret) {
    // As `az keyvault secret set --vault-name myvault --name … --value …` leaves it: no tag of ours.
    double.plant(config.name, { value: secret.reveal() });
  },
  async breakDestination(config) {
    // A secret of that name was deleted on a soft-delete vault: the name cannot be reused until it is recovered or purged.
    double.plant(config.name, { value: 'deleted-before', tags: { 'managed-by': 'token-rotator' } });
    double.softDelete(config.name);
  },
}));

const meta = (over: Partial<TokenMeta> = {}): TokenMeta => ({
  name: 'ingest',
  id: 'tok-2',
  expiresAt: new Date('2027-01-31T10:20:30.456Z'),
  rotationId: 'rot-1',
  rotatedAt: new Date('2026-12-01T12:00:00.000Z'),
  ...over,
});

async function failure(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    (value) => {
      throw new Error(`expected a failure, got ${inspect(value)}`);
    },
    (error: unknown) => error as Error,
  );
}

/** Everything an error shows: message, stack, inspect() and its causes. */
function shown(error: Error): Record<string, string> {
  const out: Record<string, string> = { inspect: inspect(error, { depth: Infinity }), string: String(error) };
  let at: unknown = error;
  for (let depth = 0; at && depth < 10; depth++, at = (at as Error).cause) {
    out[`message ${depth}`] = String((at as Error).message);
    out[`stack ${depth}`] = String((at as Error).stack);
  }
  return out;
}

describe('the azure-key-vault sink, beyond the contract', () => {
  const opened: Array<SinkClient<AzureKeyVaultSinkConfig>> = [];
  let log: ReturnType<typeof rawLog>;
  async function open(env: NodeJS.ProcessEnv = process.env): Promise<SinkClient<AzureKeyVaultSinkConfig>> {
    log = rawLog();
    const client = await azureKeyVaultSinkType.open({ logger: log.logger, env, reference: () => undefined });
    opened.push(client);
    return client;
  }
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((c) => c.close()));
  });
  const fresh = (raw: Record<string, unknown> = {}) => configOf({ name: `focus-${++count}`, ...raw });
  const requestsSince = (since: number) => double.requests.slice(since);

  it('adds a version with the marker, the metadata and the policy tags, the content type, and the expiry as expiresOn', async () => {
    const config = fresh({ contentType: 'text/plain', tags: { team: 'ingest' } });
    const client = await open();
    expect(await client.write(config, new Secret('xaat-canary-focus-1'), meta(), {})).toBe('created');
    const [version] = double.versions(config.name);
    expect(version).toMatchObject({
      value: 'xaat-canary-focus-1',
      contentType: 'text/plain',
      enabled: true,
      // Key Vault keeps whole seconds.
      exp: Math.floor(Date.parse('2027-01-31T10:20:30.456Z') / 1000),
      tags: {
        team: 'ingest',
        'managed-by': 'token-rotator',
        'token-name': 'ingest',
        'token-id': 'tok-2',
        'expires-at': '2027-01-31T10:20:30.456Z',
        'rotation-id': 'rot-1',
        'rotated-at': '2026-12-01T12:00:00.000Z',
      },
    });
    expect(JSON.stringify(version!.tags)).not.toContain('xaat-canary-focus-1');

    // A token that never expires: no expiresOn, and the tag says never.
    expect(await client.write(config, new Secret('xaat-canary-focus-2'), meta({ expiresAt: null, rotationId: 'rot-2' }), {})).toBe(
      'updated',
    );
    const second = double.versions(config.name)[1]!;
    expect(second.exp).toBeUndefined();
    expect(second.tags?.['expires-at']).toBe('never');
    expect(await client.read(config, {})).toMatchObject({ meta: { id: 'tok-2', expiresAt: null, rotationId: 'rot-2' } });
  });

  it('leaves out expiresOn for an expiry the SDK cannot send (after January 2038), keeping it in the expires-at tag', async () => {
    const config = fresh();
    const client = await open();
    const far = new Date('2040-06-01T00:00:00.000Z');
    await client.write(config, new Secret('xaat-canary-2040'), meta({ expiresAt: far }), {});
    const [version] = double.versions(config.name);
    expect(version!.exp).toBeUndefined();
    expect(version!.tags?.['expires-at']).toBe('2040-06-01T00:00:00.000Z');
    expect(await client.write(config, new Secret('xaat-canary-2040'), meta({ expiresAt: far }), {})).toBe('unchanged');
  });

  it('adds no second version when a write is retried with the same rotation id, counted by the double and by the SDK', async () => {
    const config = fresh();
    const first = await open();
    expect(await first.write(config, new Secret('xaat-canary-retry'), meta(), {})).toBe('created');
    // The run that crashed after the PUT comes back with the same secret and rotation, in new objects.
    const since = double.requests.length;
    const retry = await open();
    expect(await retry.write(config, new Secret('xaat-canary-retry'), meta(), {})).toBe('unchanged');
    expect(requestsSince(since).map((r) => [r.method, r.status])).toEqual([
      ['GET', 401],
      ['GET', 200],
    ]);
    expect(double.versions(config.name)).toHaveLength(1);

    const sdk = new SecretClient(double.vaultUrl(), new DefaultAzureCredential());
    const listed = [];
    for await (const properties of sdk.listPropertiesOfSecretVersions(config.name)) listed.push(properties);
    expect(listed).toHaveLength(1);
    expect(listed[0]!.tags).toMatchObject({ 'rotation-id': 'rot-1', 'managed-by': 'token-rotator' });

    // The next rotation adds exactly one.
    expect(await retry.write(config, new Secret('xaat-canary-retry-next'), meta({ rotationId: 'rot-2', id: 'tok-3' }), {})).toBe('updated');
    expect(double.versions(config.name).map((v) => v.tags?.['rotation-id'])).toEqual(['rot-1', 'rot-2']);
  });

  it('adds no second version when the answer to its PUT is lost after Key Vault committed it', async () => {
    const config = fresh();
    const client = await open();
    double.vault().dropAfterCommit = 1;
    const since = double.requests.length;
    expect(await client.write(config, new Secret('xaat-canary-lost-answer'), meta(), {})).toBe('created');
    expect(double.versions(config.name)).toHaveLength(1);
    expect(requestsSince(since).map((r) => `${r.method} ${r.status}${r.dropped ? ' dropped' : ''}`)).toEqual([
      'GET 401',
      'GET 404',
      'PUT 200 dropped',
      'GET 200',
    ]);
  });

  it('pages through many versions as Key Vault lists them (maxresults and nextLink)', async () => {
    const config = fresh();
    for (let i = 0; i < 30; i++) double.plant(config.name, { value: `v${i}`, tags: { 'managed-by': 'token-rotator' } });
    const sdk = new SecretClient(double.vaultUrl(), new DefaultAzureCredential());
    let pages = 0;
    let items = 0;
    for await (const page of sdk.listPropertiesOfSecretVersions(config.name).byPage({ maxPageSize: 25 })) {
      pages++;
      items += page.length;
    }
    expect({ pages, items }).toEqual({ pages: 2, items: 30 });
  });

  it("brings the latest version's tags and content type up to date in place when the policy changes them, without a new version", async () => {
    const config = fresh({ contentType: 'text/plain' });
    const client = await open();
    await client.write(config, new Secret('xaat-canary-patch'), meta(), {});
    const changed = { ...config, tags: { team: 'payments' }, contentType: 'application/x-token' };
    const since = double.requests.length;
    expect(await client.write(changed, new Secret('xaat-canary-patch'), meta(), {})).toBe('updated');
    expect(requestsSince(since).map((r) => r.method)).toEqual(['GET', 'PATCH']);
    const versions = double.versions(config.name);
    expect(versions).toHaveLength(1);
    expect(versions[0]).toMatchObject({ contentType: 'application/x-token', tags: { team: 'payments', 'rotation-id': 'rot-1' } });
    expect(await client.write(changed, new Secret('xaat-canary-patch'), meta(), {})).toBe('unchanged');
  });

  it('refuses a secret another tool manages, naming it and its marker, reads it as unowned, and takes it over with adopt', async () => {
    const config = fresh();
    double.plant(config.name, { value: 'xaat-foreign-focus', tags: { 'managed-by': 'external-secrets', env: 'prod' } });
    const client = await open();
    const error = await failure(client.write(config, new Secret('xaat-canary-adopt'), meta(), {}));
    expect(error).toBeInstanceOf(SinkError);
    expect(error.message).toBe(
      `refusing to write azure-key-vault myvault.vault.azure.net/secrets/${config.name}: it exists and is not managed by token-rotator ` +
        '(its latest version is tagged managed-by: external-secrets); set adopt: true on the sink to take it over',
    );
    const content = await client.read(config, {});
    expect(content?.secret?.reveal()).toBe('xaat-foreign-focus');
    expect(content?.unowned).toMatch(/not managed by token-rotator.*adopt: true/);
    expect(content?.meta).toEqual({});
    await expect(client.preflight!(config, {})).rejects.toThrow(/adopt: true/);
    expect(double.versions(config.name)).toHaveLength(1);

    const adopting = { ...config, adopt: true };
    await expect(client.preflight!(adopting, {})).resolves.toBeUndefined();
    expect(await client.write(adopting, new Secret('xaat-canary-adopt'), meta(), {})).toBe('updated');
    const [old, taken] = double.versions(config.name);
    // The other tool's version keeps its tags; the new one is ours.
    expect(old!.tags).toEqual({ 'managed-by': 'external-secrets', env: 'prod' });
    expect(taken!.tags?.['managed-by']).toBe('token-rotator');
    expect(await client.read(config, {})).toMatchObject({ meta: { rotationId: 'rot-1' } });
  });

  it('says to recover or purge a soft-deleted secret, in write and preflight, and writes once it is purged', async () => {
    const config = fresh();
    double.plant(config.name, { value: 'old', tags: { 'managed-by': 'token-rotator' } });
    double.softDelete(config.name);
    const client = await open();
    expect(await client.read(config, {})).toBeUndefined();
    const error = await failure(client.write(config, new Secret('xaat-canary-deleted'), meta(), {}));
    expect(error.message).toContain(
      `azure-key-vault myvault.vault.azure.net/secrets/${config.name}: the secret is deleted but recoverable`,
    );
    expect(error.message).toContain(`az keyvault secret recover --vault-name <vault> --name ${config.name}`);
    expect(error.message).toContain(`az keyvault secret purge --vault-name <vault> --name ${config.name}`);
    expect(double.requests.at(-1)).toMatchObject({
      method: 'PUT',
      status: 409,
      errorCode: 'Conflict',
      innerCode: 'ObjectIsDeletedButRecoverable',
    });
    await expect(client.preflight!(config, {})).rejects.toThrow(/deleted but recoverable.*recover.*purge/);

    await new SecretClient(double.vaultUrl(), new DefaultAzureCredential()).purgeDeletedSecret(config.name);
    expect(await client.write(config, new Secret('xaat-canary-deleted'), meta(), {})).toBe('created');
  });

  it('names the missing RBAC data action and the role when Azure RBAC denies, and the permission when an access policy does', async () => {
    const client = await open();
    const denied = fresh();
    double.deny({ action: 'setSecret', secret: denied.name });
    const set = await failure(client.write(denied, new Secret('xaat-canary-denied'), meta(), {}));
    expect(set).toBeInstanceOf(SinkError);
    expect(set.message).toMatch(
      new RegExp(
        `^azure-key-vault myvault\\.vault\\.azure\\.net/secrets/${denied.name}: permission denied to add a version \\(403 Forbidden/ForbiddenByRbac\\): ` +
          'the identity lacks the data action Microsoft\\.KeyVault/vaults/secrets/setSecret/action; assign it the role "Key Vault Secrets Officer"',
      ),
    );
    // Key Vault cannot tell whether a write would be allowed without writing: preflight passes, and says so.
    await expect(client.preflight!(denied, {})).resolves.toBeUndefined();
    expect(log.lines.join('')).toContain('not checked: permission to add a version');

    const unreadable = fresh();
    double.deny({ action: 'getSecret', secret: unreadable.name });
    await expect(client.preflight!(unreadable, {})).rejects.toThrow(
      /permission denied to read the secret.*Microsoft\.KeyVault\/vaults\/secrets\/getSecret\/action/,
    );
    await expect(client.read(unreadable, {})).rejects.toThrow(/getSecret\/action/);

    const policy = configOf({ vaultUrl: double.vaultUrl('policyvault'), name: `focus-${++count}` });
    double.deny({ action: 'setSecret' }, 'policyvault');
    const byPolicy = await failure(client.write(policy, new Secret('xaat-canary-policy'), meta(), {}));
    expect(byPolicy.message).toContain(
      `azure-key-vault policyvault.vault.azure.net/secrets/${policy.name}: permission denied to add a version (403 Forbidden/AccessDenied): ` +
        `the vault's access policy does not give the identity the secret permission "set"`,
    );
    for (const error of [set, byPolicy]) expectNoLeak(shown(error), ['xaat-canary-denied', 'xaat-canary-policy', app.clientSecret!]);
  });

  it('says when the latest version is disabled', async () => {
    const config = fresh();
    double.plant(config.name, { value: 'off', tags: { 'managed-by': 'token-rotator' }, enabled: false });
    const client = await open();
    await expect(client.write(config, new Secret('xaat-canary-disabled'), meta(), {})).rejects.toThrow(
      /its latest version is disabled.*set-attributes .* --enabled true/,
    );
  });

  it('preflight: passes for a new secret without creating anything, and logs what it could not check', async () => {
    const config = fresh();
    const client = await open();
    const since = double.requests.length;
    await expect(client.preflight!(config, {})).resolves.toBeUndefined();
    expect(requestsSince(since).map((r) => `${r.method} ${r.path.replace(config.name, 'NAME')} ${r.status}`)).toEqual([
      'GET /secrets/NAME/ 401',
      'GET /secrets/NAME/ 404',
      'GET /deletedsecrets/NAME 404',
    ]);
    expect(double.versions(config.name)).toEqual([]);
    expect(log.lines.join('')).toMatch(/no secret yet \(it will be created\).*not checked: permission to add a version/);
  });

  it('preflight and writes fail with what to do when Entra ID refuses the client secret, and never show it', async () => {
    const wrong = `cs~wrong-${randomUUID()}`;
    const restore = setProcessEnv({ AZURE_CLIENT_SECRET: wrong });
    try {
      const client = await open();
      const error = await failure(client.preflight!(fresh(), {}));
      expect(error).toBeInstanceOf(SinkError);
      expect(error.message).toMatch(
        /Microsoft Entra ID refused the credential \(AADSTS7000215\): the client secret in AZURE_CLIENT_SECRET is wrong/,
      );
      expect(double.tokenRequests.at(-1)).toMatchObject({ credential: 'client_secret', status: 401, aadsts: 7000215 });
      const write = await failure(client.write(fresh(), new Secret('xaat-canary-badcred'), meta(), {}));
      expect(write.message).toMatch(/AADSTS7000215/);
      for (const e of [error, write]) expectNoLeak(shown(e), [wrong, app.clientSecret!, 'xaat-canary-badcred']);
      expectNoLeak({ log: log.lines.join('') }, [wrong, app.clientSecret!]);
    } finally {
      restore();
    }
  });

  it('authenticates with workload identity (a federated service account token) when the webhook has injected its variables', async () => {
    const tokenFile = join(dir, 'azure-identity-token');
    const assertion = await double.entra.serviceAccountToken('system:serviceaccount:token-rotator:token-rotator');
    await writeFile(tokenFile, assertion, { mode: 0o600 });
    const restore = setProcessEnv({ ...AZURE_VARIABLES_CLEARED, ...workloadIdentityEnv(double, app, tokenFile) });
    try {
      const client = await open();
      const config = fresh();
      const since = double.tokenRequests.length;
      expect(await client.write(config, new Secret('xaat-canary-wi'), meta(), {})).toBe('created');
      expect(double.tokenRequests.slice(since)).toEqual([
        {
          tenant: double.tenantId,
          clientId: app.clientId,
          grantType: 'client_credentials',
          scope: 'https://vault.azure.net/.default',
          credential: 'client_assertion',
          status: 200,
        },
      ]);
      expect(double.requests.at(-1)).toMatchObject({ method: 'PUT', status: 200, objectId: app.objectId });
      expectNoLeak({ log: log.lines.join('') }, [assertion, 'xaat-canary-wi']);

      // A token for another service account matches no federated credential: Entra says so, and so do we.
      await writeFile(tokenFile, await double.entra.serviceAccountToken('system:serviceaccount:other:other'));
      const other = await open();
      const error = await failure(other.write(fresh(), new Secret('xaat-canary-wi-2'), meta(), {}));
      expect(error.message).toMatch(
        /Entra ID refused the credential \(AADSTS70021\): the service account token .* subject system:serviceaccount:/,
      );
    } finally {
      restore();
    }
  });

  it('says which credentials DefaultAzureCredential looks for when none is set up', async () => {
    // AZURE_TOKEN_CREDENTIALS narrows the chain (here to the environment) so that no managed identity probe is waited for.
    const restore = setProcessEnv({
      ...AZURE_VARIABLES_CLEARED,
      HTTPS_PROXY: double.proxyUrl,
      AZURE_TOKEN_CREDENTIALS: 'EnvironmentCredential',
    });
    try {
      const client = await open();
      const error = await failure(client.write(fresh(), new Secret('xaat-canary-nocred'), meta(), {}));
      expect(error.message).toMatch(
        /no Azure credential is available: DefaultAzureCredential tried.*AZURE_FEDERATED_TOKEN_FILE.*managed identity/,
      );
    } finally {
      restore();
    }
  });

  it('fails with "tried again on the next run" when Key Vault still answers 503 after four tries', async () => {
    const client = await open();
    const config = fresh();
    double.vault().outage = true;
    try {
      const since = double.requests.length;
      await expect(client.write(config, new Secret('xaat-canary-outage'), meta(), {})).rejects.toThrow(
        /Key Vault failed \(503 ServiceUnavailable: .*\); it is tried again on the next run/,
      );
      // As the SDK's retry policy would: the first try and three more.
      expect(requestsSince(since).map((r) => r.status)).toEqual([503, 503, 503, 503]);
    } finally {
      double.vault().outage = false;
    }
  }, 20_000);

  it("says to use the vault's tenant when the vault is in another tenant than the credential", async () => {
    const client = await open();
    const config = configOf({ vaultUrl: double.vaultUrl('foreignvault'), name: `focus-${++count}` });
    await expect(client.write(config, new Secret('xaat-canary-tenant'), meta(), {})).rejects.toThrow(
      /foreignvault.*in another tenant than the credential's \(AZURE_TENANT_ID\).*AZURE_ADDITIONALLY_ALLOWED_TENANTS/,
    );
  });

  it('answers the bearer challenge as Key Vault asks: first request without a token, then with one, each with an api-version', async () => {
    const client = await open();
    const config = fresh();
    const since = double.requests.length;
    const tokens = double.tokenRequests.length;
    await client.write(config, new Secret('xaat-canary-wire'), meta(), {});
    const seen = requestsSince(since);
    expect(seen.map((r) => [r.method, r.bearer, r.status])).toEqual([
      ['GET', false, 401],
      ['GET', true, 404],
      ['PUT', true, 200],
    ]);
    expect(seen.every((r) => r.apiVersion === '2026-04-01')).toBe(true);
    expect(double.tokenRequests.length - tokens).toBe(1);
    expect(double.connects.filter((c) => !c.tunnelled)).toEqual([]);
  });

  it('routes the Azure SDK log (AZURE_LOG_LEVEL) through our logger, where no secret or credential shows, and not to stderr', async () => {
    const written: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      written.push(String(chunk));
      return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof process.stderr.write;
    setLogLevel('verbose');
    try {
      const client = await open();
      const config = fresh();
      await client.write(config, new Secret('xaat-canary-sdklog'), meta(), {});
      await client.read(config, {});
      await client.write(config, new Secret('xaat-canary-sdklog-2'), meta({ rotationId: 'rot-2' }), {});
      const sdkLines = log.lines.filter((line) => line.includes('"azureSdk":true'));
      expect(sdkLines.some((line) => line.includes('azure:core-rest-pipeline'))).toBe(true);
      expect(sdkLines.some((line) => line.includes('azure:identity'))).toBe(true);
      expectNoLeak({ log: log.lines.join(''), stderr: written.join('') }, [
        'xaat-canary-sdklog',
        'xaat-canary-sdklog-2',
        app.clientSecret!,
      ]);
      expect(written.join('')).not.toContain('azure:');
    } finally {
      setLogLevel();
      process.stderr.write = write;
    }
  });

  it('warns, by name only, about Azure variables the SDK cannot see (set in a dotenv file, not in the process)', async () => {
    await open({ ...process.env, AZURE_CLIENT_ID: 'from-a-dotenv-file', AZURE_CLIENT_SECRET: 'xaat-dotenv-only-secret' });
    const text = log.lines.join('');
    expect(text).toContain('the Azure SDK reads AZURE_CLIENT_ID, AZURE_CLIENT_SECRET from the process environment only');
    expectNoLeak({ log: text }, ['xaat-dotenv-only-secret', 'from-a-dotenv-file']);
  });
});

describe('azure-key-vault configuration', () => {
  const parse = (raw: Record<string, unknown>) =>
    azureKeyVaultSinkType.parse(
      { type: 'azure-key-vault', vaultUrl: 'https://myvault.vault.azure.net', name: 'ingest-token', ...raw },
      { policyDir: '.' },
    );

  it('takes the issue example, and keeps the vault origin alone', () => {
    expect(parse({ vaultUrl: 'https://myvault.vault.azure.net/', contentType: 'text/plain', tags: { team: 'ingest' } })).toEqual({
      ok: true,
      config: {
        type: 'azure-key-vault',
        vaultUrl: 'https://myvault.vault.azure.net',
        name: 'ingest-token',
        contentType: 'text/plain',
        tags: { team: 'ingest' },
        adopt: false,
      },
    });
  });

  it('refuses what Key Vault or the SDK would not take, each problem with its path', () => {
    const issues = (raw: Record<string, unknown>) => {
      const parsed = parse(raw);
      return parsed.ok ? [] : parsed.issues;
    };
    expect(issues({ vaultUrl: 'http://myvault.vault.azure.net' })).toEqual([{ path: 'vaultUrl', message: expect.stringMatching(/https/) }]);
    expect(issues({ vaultUrl: 'https://myvault.vault.azure.net/secrets/x' })).toEqual([
      { path: 'vaultUrl', message: expect.stringMatching(/without a path/) },
    ]);
    expect(issues({ name: 'ingest_token' })).toEqual([{ path: 'name', message: expect.stringMatching(/letters, digits and "-"/) }]);
    expect(issues({ tags: { 'managed-by': 'me' } })).toEqual([{ path: 'tags.managed-by', message: 'is set by token-rotator itself' }]);
    expect(issues({ tags: Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`t${i}`, 'x'])) })).toEqual([
      { path: 'tags', message: expect.stringMatching(/at most 9 tags/) },
    ]);
    expect(issues({ clientSecret: 'x' })).toEqual([{ path: 'clientSecret', message: expect.stringMatching(/unknown key/) }]);
  });

  it('identifies a secret without case, as Key Vault names it', () => {
    const a = parse({ name: 'Ingest-Token' });
    const b = parse({ vaultUrl: 'https://MyVault.vault.azure.net', name: 'ingest-token' });
    if (!a.ok || !b.ok) throw new Error('parse failed');
    expect(azureKeyVaultSinkType.target(a.config)).toBe(azureKeyVaultSinkType.target(b.config));
    expect(azureKeyVaultSinkType.describe(a.config)).toBe('azure-key-vault myvault.vault.azure.net/secrets/Ingest-Token');
  });
});

import { readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { inspect } from 'node:util';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { referenceReader } from '../../src/common/reference.js';
import { Secret } from '../../src/secret.js';
import type { TokenMeta } from '../../src/sinks/sink.js';
import { type VaultSinkConfig, vaultSinkType } from '../../src/sinks/vault/vault-sink.js';
import { sinkContract } from '../contracts/sink-contract.js';
import type { VaultDouble } from '../doubles/vault/start-vault-double.js';
import { capturedLog, type VaultHere, vaultHere } from '../doubles/vault/vault-here.js';
import { expectNoLeak } from '../helpers/leaks.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let h: VaultHere;
let dir: string;
let count = 0;

beforeAll(async () => {
  dir = await makeTempDir();
  h = await vaultHere(dir);
});
afterAll(async () => {
  await h.close();
  await rm(dir, { recursive: true, force: true });
});

function configOf(raw: Record<string, unknown>, env: Record<string, string> = {}): VaultSinkConfig {
  const parsed = vaultSinkType.parse({ type: 'vault', ...raw }, { policyDir: dir, env });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.config;
}

const at = (config: VaultSinkConfig) => ({ path: config.path, ...(config.namespace ? { namespace: config.namespace } : {}) });

/** Rules of the `breaks` policy of each double and namespace, by path: an exact path wins over the prefix grant. */
const narrowed = new Map<VaultDouble, Map<string, Map<string, string[]>>>();
function narrow(double: VaultDouble, namespace: string | undefined, path: string, capabilities: string[]): void {
  const byNamespace = narrowed.get(double) ?? new Map<string, Map<string, string[]>>();
  narrowed.set(double, byNamespace);
  const rules = byNamespace.get(namespace ?? '') ?? new Map<string, string[]>();
  byNamespace.set(namespace ?? '', rules);
  rules.set(path, capabilities);
  const hcl = [...rules].map(([p, caps]) => `path "${p}" { capabilities = [${caps.map((c) => `"${c}"`).join(', ')}] }`).join('\n');
  double.policy('breaks', hcl, namespace);
}

/** As `vault kv put` leaves a secret: the value in the key, no custom metadata of ours. */
function plantForeign(double: VaultDouble, config: VaultSinkConfig, secret: Secret): void {
  double.kv.put(at(config), { [config.key]: secret.reveal() });
}

/** Ours, but its data may only be read: the policy of the sink's identity no longer lets it write there. */
function breakDestination(double: VaultDouble, config: VaultSinkConfig): void {
  narrow(double, config.namespace, `${config.mount}/data/${config.path}`, ['read']);
}

sinkContract('vault (token from VAULT_TOKEN, http)', { ownership: 'marker', preflight: true }, () => {
  const token = h.http.token({ policies: ['token-rotator', 'breaks'] });
  return {
    type: vaultSinkType,
    context: { env: {}, reference: (variable) => (variable === 'VAULT_TOKEN' ? new Secret(token) : undefined) },
    config: () => configOf({ address: h.http.url, path: `contract/token-${++count}` }),
    carriesMetadata: () => true,
    plantForeign: async (config, secret) => plantForeign(h.http, config, secret),
    breakDestination: async (config) => breakDestination(h.http, config),
  };
});

sinkContract('vault (kubernetes login, https with a CA file)', { ownership: 'marker', preflight: true }, () => ({
  type: vaultSinkType,
  // The login reads the service account token from its file; nothing comes by reference.
  context: { env: {}, reference: () => undefined },
  config: () =>
    configOf({
      address: h.tls.url,
      caCertFile: h.caFile,
      path: `contract/kubernetes-${++count}`,
      auth: { method: 'kubernetes', role: 'token-rotator', jwtFile: h.jwtFile },
    }),
  carriesMetadata: () => true,
  plantForeign: async (config, secret) => plantForeign(h.tls, config, secret),
  breakDestination: async (config) => breakDestination(h.tls, config),
}));

sinkContract('vault (approle login, namespace team-a)', { ownership: 'marker', preflight: true }, () => ({
  type: vaultSinkType,
  context: {
    env: {},
    reference: (variable) =>
      variable === 'VAULT_ROLE_ID'
        ? new Secret(h.approle.roleId)
        : variable === 'VAULT_SECRET_ID'
          ? new Secret(h.approle.secretId)
          : undefined,
  },
  config: () =>
    configOf({
      address: h.http.url,
      namespace: 'team-a',
      path: `contract/approle-${++count}`,
      key: 'api-token',
      auth: { method: 'approle', roleIdFrom: 'VAULT_ROLE_ID', secretIdFrom: 'VAULT_SECRET_ID' },
    }),
  carriesMetadata: () => true,
  plantForeign: async (config, secret) => plantForeign(h.http, config, secret),
  breakDestination: async (config) => breakDestination(h.http, config),
}));

describe('the vault sink, beyond the contract', () => {
  const meta = (over: Partial<TokenMeta> = {}): TokenMeta => ({
    name: 'ingest',
    id: 'tok-2',
    expiresAt: new Date('2027-01-01T00:00:00.000Z'),
    rotationId: 'rot-1',
    rotatedAt: new Date('2026-11-22T12:00:00.000Z'),
    ...over,
  });
  let token: string;
  let log: ReturnType<typeof capturedLog>;
  beforeEach(() => {
    token = h.http.token({ policies: ['token-rotator', 'breaks'] });
    log = capturedLog();
  });
  const open = (reference: (variable: string) => Secret | undefined = (v) => (v === 'VAULT_TOKEN' ? new Secret(token) : undefined)) =>
    vaultSinkType.open({ logger: log.logger, env: {}, reference });
  const http = (raw: Record<string, unknown>) => configOf({ address: h.http.url, ...raw });
  const requestsTo = (double: VaultDouble, path: string) => double.requests.filter((r) => r.path === path);
  const failure = async (promise: Promise<unknown>): Promise<Error> => {
    const outcome = await promise.then(
      (value) => ({ value }),
      (error: unknown) => ({ error: error as Error }),
    );
    if (!('error' in outcome)) expect.fail(`should have failed, answered ${String(outcome.value)}`);
    return outcome.error;
  };

  it('marks the secret as ours in its custom metadata on create, without the secret, by check-and-set 0', async () => {
    const config = http({ path: 'tests/marked' });
    const client = await open();
    expect(await client.write(config, new Secret('s3cret-canary-marked'), meta(), {})).toBe('created');
    const stored = h.http.kv.get(at(config))!;
    expect(stored.data).toEqual({ token: 's3cret-canary-marked' });
    expect(stored.customMetadata).toEqual({
      'managed-by': 'token-rotator',
      'token-name': 'ingest',
      'token-id': 'tok-2',
      'expires-at': '2027-01-01T00:00:00.000Z',
      'rotation-id': 'rot-1',
      'rotated-at': '2026-11-22T12:00:00.000Z',
      'data-version': '1',
    });
    expect(requestsTo(h.http, 'secret/data/tests/marked').map((r) => `${r.method} ${r.operation} ${r.status}`)).toEqual([
      'GET read 404',
      'POST create 200',
    ]);
    expect(requestsTo(h.http, 'secret/metadata/tests/marked').map((r) => `${r.method} ${r.operation} ${r.status}`)).toEqual([
      'GET read 404',
      'PATCH patch 204',
    ]);
  });

  it('keeps the other fields of the secret and its other custom metadata, and changes only the key', async () => {
    const config = http({ path: 'tests/shared', key: 'api-token' });
    h.http.kv.put(at(config), { username: 'svc-ingest', 'api-token': 'old', port: 5432 });
    h.http.kv.setMetadata(at(config), { customMetadata: { 'managed-by': 'token-rotator', team: 'ingest' } });
    const client = await open();
    expect(await client.write(config, new Secret('s3cret-canary-shared'), meta(), {})).toBe('updated');
    const stored = h.http.kv.get(at(config))!;
    expect(stored.data).toEqual({ username: 'svc-ingest', 'api-token': 's3cret-canary-shared', port: 5432 });
    expect(stored.currentVersion).toBe(2);
    expect(stored.customMetadata).toMatchObject({
      team: 'ingest',
      'managed-by': 'token-rotator',
      'rotation-id': 'rot-1',
      'data-version': '2',
    });
    expect(JSON.stringify(stored.customMetadata)).not.toContain('s3cret-canary-shared');
  });

  it('a write retried with the same rotation adds no version: one read, nothing written', async () => {
    const config = http({ path: 'tests/retried' });
    await (await open()).write(config, new Secret('same-secret'), meta(), {});
    const before = h.http.requests.length;
    // A new run after a crash: another client, the secret and meta rebuilt from the journal.
    expect(await (await open()).write(config, new Secret('same-secret'), meta(), {})).toBe('unchanged');
    expect(h.http.requests.slice(before).map((r) => `${r.method} ${r.path}`)).toEqual(['GET secret/data/tests/retried']);
    expect(h.http.kv.versions(at(config))).toBe(1);
  });

  it('a run stopped between the data and its metadata is finished without a second version, on create and on update', async () => {
    const config = http({ path: 'tests/interrupted' });
    const client = await open();
    // The metadata write fails (as a crash right after the data would leave it): the data is written, unmarked.
    narrow(h.http, undefined, 'secret/metadata/tests/interrupted', ['read']);
    await failure(client.write(config, new Secret('first-secret'), meta(), {}));
    expect(h.http.kv.get(at(config))).toMatchObject({ currentVersion: 1, data: { token: 'first-secret' }, customMetadata: null });
    expect((await client.read(config, {}))?.unowned, 'unmarked: not ours to read as ours').toContain('not managed by token-rotator');

    narrow(h.http, undefined, 'secret/metadata/tests/interrupted', ['read', 'patch']);
    // Our brand-new secret in an unmarked secret can only be our own interrupted write: finished, not refused.
    expect(await client.write(config, new Secret('first-secret'), meta(), {})).toBe('updated');
    expect(h.http.kv.get(at(config))).toMatchObject({
      currentVersion: 1,
      customMetadata: { 'managed-by': 'token-rotator', 'rotation-id': 'rot-1', 'data-version': '1' },
    });

    // The next rotation stops in the same place: version 2 holds its secret, the metadata still names rotation 1.
    narrow(h.http, undefined, 'secret/metadata/tests/interrupted', ['read']);
    const next = meta({ id: 'tok-3', rotationId: 'rot-2', rotatedAt: new Date('2026-12-22T12:00:00.000Z') });
    await failure(client.write(config, new Secret('second-secret'), next, {}));
    expect(h.http.kv.get(at(config))).toMatchObject({ currentVersion: 2, customMetadata: { 'rotation-id': 'rot-1', 'data-version': '1' } });
    // Meanwhile the metadata is not taken for the new secret's: it speaks of version 1.
    const between = await client.read(config, {});
    expect(between?.secret?.reveal()).toBe('second-secret');
    expect(between?.meta).toEqual({});

    narrow(h.http, undefined, 'secret/metadata/tests/interrupted', ['read', 'patch']);
    expect(await client.write(config, new Secret('second-secret'), next, {})).toBe('updated');
    expect(h.http.kv.get(at(config))).toMatchObject({
      currentVersion: 2,
      customMetadata: { 'token-id': 'tok-3', 'rotation-id': 'rot-2', 'data-version': '2' },
    });
    expect((await client.read(config, {}))?.meta).toEqual({
      name: 'ingest',
      id: 'tok-3',
      expiresAt: '2027-01-01T00:00:00.000Z',
      rotationId: 'rot-2',
      rotatedAt: '2026-12-22T12:00:00.000Z',
    });
  });

  it('reads the metadata through an edit of another field, but not once the key itself was changed', async () => {
    const config = http({ path: 'tests/edited' });
    const client = await open();
    await client.write(config, new Secret('ours'), meta(), {});
    h.http.kv.put(at(config), { token: 'ours', note: 'added by hand' });
    expect((await client.read(config, {}))?.meta).toMatchObject({ id: 'tok-2', rotationId: 'rot-1' });
    h.http.kv.put(at(config), { token: 'someone-elses', note: 'added by hand' });
    const changed = await client.read(config, {});
    expect(changed?.secret?.reveal()).toBe('someone-elses');
    expect(changed?.meta, 'the token id of our secret must not be claimed for another one').toEqual({});
  });

  it('refuses a secret another tool manages, naming it, and keeps that tool’s metadata when adopting', async () => {
    const config = http({ path: 'tests/eso' });
    h.http.kv.put(at(config), { token: 'pushed-by-eso' });
    h.http.kv.setMetadata(at(config), { customMetadata: { 'managed-by': 'external-secrets', owner: 'platform' } });
    const client = await open();
    const read = await client.read(config, {});
    expect(read?.unowned).toBe(
      'exists and is not managed by token-rotator (custom metadata managed-by: external-secrets); set adopt: true on the sink to take it over',
    );
    expect(read?.meta).toEqual({});
    const error = await failure(client.write(config, new Secret('pushed-by-eso'), meta(), {}));
    expect(error.message).toBe(
      `refusing to write vault ${h.http.url} secret/tests/eso[token]: it exists and is not managed by token-rotator (custom metadata managed-by: external-secrets); set adopt: true on the sink to take it over`,
    );
    expect(h.http.kv.versions(at(config))).toBe(1);

    expect(await client.write({ ...config, adopt: true }, new Secret('ours-now'), meta(), {})).toBe('updated');
    expect(h.http.kv.get(at(config))?.customMetadata).toMatchObject({ 'managed-by': 'token-rotator', owner: 'platform' });
  });

  it('takes a deleted or destroyed latest version for a missing secret, and writes a new version over it', async () => {
    const config = http({ path: 'tests/deleted' });
    const client = await open();
    await client.write(config, new Secret('before-delete'), meta(), {});
    h.http.kv.deleteLatest(at(config));
    expect(await client.read(config, {})).toBeUndefined();
    expect(await client.write(config, new Secret('after-delete'), meta({ rotationId: 'rot-2' }), {})).toBe('updated');
    expect(h.http.kv.get(at(config))).toMatchObject({ currentVersion: 2, data: { token: 'after-delete' } });
    h.http.kv.destroyLatest(at(config));
    expect(await client.read(config, {})).toBeUndefined();
    expect(await client.write(config, new Secret('after-destroy'), meta({ rotationId: 'rot-3' }), {})).toBe('updated');
    expect((await client.read(config, {}))?.meta).toMatchObject({ rotationId: 'rot-3' });
  });

  it('reads again and writes once more when another writer changed the secret between its read and its write', async () => {
    const config = http({ path: 'tests/race' });
    const client = await open();
    await client.write(config, new Secret('first'), meta(), {});
    let raced = false;
    h.http.hooks.beforeHandle = (request) => {
      if (!raced && request.method === 'POST' && request.path === 'secret/data/tests/race') {
        raced = true;
        h.http.kv.put(at(config), { token: 'written-meanwhile' });
      }
    };
    try {
      expect(await client.write(config, new Secret('second'), meta({ rotationId: 'rot-2' }), {})).toBe('updated');
    } finally {
      h.http.hooks.beforeHandle = undefined;
    }
    const posts = requestsTo(h.http, 'secret/data/tests/race').filter((r) => r.method === 'POST');
    expect(posts.map((r) => r.status)).toEqual([200, 400, 200]);
    expect(h.http.kv.get(at(config))).toMatchObject({ currentVersion: 3, data: { token: 'second' } });
    expect(h.http.kv.get(at(config))?.history.get(2)).toEqual({ token: 'written-meanwhile' });
  });

  it('always sends check-and-set, so a mount or secret with cas_required is written', async () => {
    const config = http({ path: 'tests/cas-required' });
    h.http.kv.put(at(config), { token: 'old' });
    h.http.kv.setMetadata(at(config), { casRequired: true, customMetadata: { 'managed-by': 'token-rotator' } });
    const client = await open();
    expect(await client.write(config, new Secret('new'), meta(), {})).toBe('updated');
    expect(h.http.kv.get(at(config))?.data).toEqual({ token: 'new' });
  });

  it('says which capability is missing on which path when Vault answers permission denied', async () => {
    const client = await open();
    const noPatch = http({ path: 'tests/no-patch' });
    narrow(h.http, undefined, 'secret/metadata/tests/no-patch', ['read']);
    const patchError = await failure(client.write(noPatch, new Secret('s3cret-canary-denied'), meta(), {}));
    expect(patchError.message).toBe(
      `cannot write vault ${h.http.url} secret/tests/no-patch[token]: Vault answered PATCH secret/metadata/tests/no-patch: 403 permission denied ` +
        '(the token\'s policies lack "patch" on secret/metadata/tests/no-patch; it has: read; add "patch" to the Vault policy of the token in VAULT_TOKEN)',
    );

    const noCreate = http({ path: 'tests/no-create' });
    narrow(h.http, undefined, 'secret/data/tests/no-create', ['read', 'update']);
    const createError = await failure(client.write(noCreate, new Secret('s3cret-canary-denied'), meta(), {}));
    expect(createError.message).toContain('(the token\'s policies lack "create" on secret/data/tests/no-create; it has: read, update;');

    const noRead = http({ path: 'elsewhere/app' });
    const readError = await failure(client.read(noRead, {}));
    expect(readError.message).toContain(
      `cannot read vault ${h.http.url} secret/elsewhere/app[token]: Vault answered GET secret/data/elsewhere/app: 403 permission denied (the token's policies lack "read" on secret/data/elsewhere/app; it has: nothing;`,
    );
    for (const error of [patchError, createError, readError]) {
      expect(String(error.stack)).not.toContain(token);
      expect(String(error.stack)).not.toContain('s3cret-canary-denied');
    }
  });

  it('says the token is no good when Vault knows it no more', async () => {
    const client = await open();
    h.http.revoke(token);
    const error = await failure(client.write(http({ path: 'tests/revoked' }), new Secret('s'), meta(), {}));
    expect(error.message).toMatch(
      /403 permission denied \(the token is invalid or expired, or its policies lack "read" on secret\/data\/tests\/revoked\)$/,
    );
  });

  it('takes VAULT_ADDR, VAULT_TOKEN_FILE, VAULT_NAMESPACE and VAULT_CACERT from the environment when the sink does not say', async () => {
    const tokenFile = join(dir, 'vault-token');
    const namespaced = h.http.token({ policies: ['token-rotator'], namespace: 'team-a' });
    await writeFile(tokenFile, `${namespaced}\n`, { mode: 0o600 });
    const env = { VAULT_ADDR: `${h.http.url}/`, VAULT_TOKEN_FILE: tokenFile, VAULT_NAMESPACE: 'team-a' };
    const config = configOf({ path: 'tests/from-env' }, env);
    expect(config).toMatchObject({ address: h.http.url, namespace: 'team-a', auth: { method: 'token', tokenFrom: 'VAULT_TOKEN' } });
    expect(vaultSinkType.references!(config)).toEqual([{ path: 'auth.tokenFrom', variable: 'VAULT_TOKEN' }]);
    // The product's own reader: VAULT_TOKEN, or the file VAULT_TOKEN_FILE names.
    const client = await vaultSinkType.open({ logger: log.logger, env, reference: referenceReader(env, dir) });
    expect(await client.write(config, new Secret('from-env'), meta(), {})).toBe('created');
    expect(h.http.kv.get({ path: 'tests/from-env', namespace: 'team-a' })?.data).toEqual({ token: 'from-env' });
    expect(h.http.requests.filter((r) => r.path === 'secret/data/tests/from-env').every((r) => r.namespace === 'team-a')).toBe(true);

    const tls = configOf(
      { path: 'tests/from-env', auth: { method: 'kubernetes', role: 'token-rotator', jwtFile: h.jwtFile } },
      {
        VAULT_ADDR: h.tls.url,
        VAULT_CACERT: h.caFile,
      },
    );
    expect(tls.caCertFile).toBe(h.caFile);
    expect(await (await open()).write(tls, new Secret('over-tls'), meta(), {})).toBe('created');
    const untrusted = await failure((await open()).write({ ...tls, caCertFile: undefined }, new Secret('over-tls'), meta(), {}));
    expect(untrusted.message).toMatch(
      /cannot reach Vault at https:\/\/127\.0\.0\.1:\d+ \(\w+\): its certificate is not trusted; set caCertFile \(or VAULT_CACERT\)/,
    );
  });

  it('logs in with kubernetes again when Vault drops the login’s token early, once, and revokes its token at close', async () => {
    const config = configOf({
      address: h.tls.url,
      caCertFile: h.caFile,
      path: 'tests/relogin',
      auth: { method: 'kubernetes', role: 'token-rotator', jwtFile: h.jwtFile },
    });
    const client = await open(() => undefined);
    const logins = () => h.tls.requests.filter((r) => r.path === 'auth/kubernetes/login').length;
    const before = logins();
    await client.write(config, new Secret('one'), meta(), {});
    expect(logins() - before).toBe(1);
    expect(h.tls.revokeLogins()).toBeGreaterThan(0);
    expect(await client.write(config, new Secret('two'), meta({ rotationId: 'rot-2' }), {})).toBe('updated');
    expect(logins() - before).toBe(2);
    const alive = h.tls.tokens().filter((t) => t.path === 'auth/kubernetes/login').length;
    await client.close();
    expect(h.tls.tokens().filter((t) => t.path === 'auth/kubernetes/login').length).toBe(alive - 1);
    expectNoLeak({ log: log.lines.join('') }, [readFileSync(h.jwtFile, 'utf8')]);
  });

  it('logs in again before the login’s token expires', async () => {
    h.tls.kubernetes.role('short-lived', {
      boundServiceAccountNames: ['token-rotator'],
      boundServiceAccountNamespaces: ['token-rotator'],
      policies: ['token-rotator'],
      ttlSeconds: 1,
    });
    const config = configOf({
      address: h.tls.url,
      caCertFile: h.caFile,
      path: 'tests/short-lived',
      auth: { method: 'kubernetes', role: 'short-lived', jwtFile: h.jwtFile },
    });
    const client = await open(() => undefined);
    const start = h.tls.requests.length;
    await client.write(config, new Secret('one'), meta(), {});
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await client.read(config, {});
    const seen = h.tls.requests.slice(start);
    expect(seen.filter((r) => r.path === 'auth/kubernetes/login')).toHaveLength(2);
    expect(
      seen.filter((r) => r.status === 403),
      'the new token came before the old one was refused',
    ).toEqual([]);
  });

  it('names the role and what to check when the kubernetes login is refused', async () => {
    const otherJwt = join(dir, 'other-serviceaccount-token');
    await writeFile(otherJwt, h.tls.kubernetes.serviceAccountToken('apps', 'default'));
    const config = configOf({
      address: h.tls.url,
      caCertFile: h.caFile,
      path: 'tests/refused',
      auth: { method: 'kubernetes', role: 'token-rotator', jwtFile: otherJwt },
    });
    const error = await failure((await open(() => undefined)).write(config, new Secret('s'), meta(), {}));
    expect(error.message).toBe(
      `cannot write vault ${h.tls.url} secret/tests/refused[token]: Vault refused a kubernetes login as role "token-rotator" at auth/kubernetes: ` +
        "403 service account name not authorized (check that role token-rotator's bound_service_account_names and bound_service_account_namespaces name this pod's service account, and the auth method's kubernetes_host)",
    );
    const missing = await failure(
      (await open(() => undefined)).write(
        { ...config, auth: { ...config.auth, jwtFile: join(dir, 'nowhere') } as VaultSinkConfig['auth'] },
        new Secret('s'),
        meta(),
        {},
      ),
    );
    expect(missing.message).toContain('cannot read the service account token');
    expect(missing.message).toContain('(ENOENT): run in a pod with a service account token mounted, or set auth.jwtFile');
  });

  it('masks what Vault echoes of the credentials it was sent', async () => {
    const client = await open((v) =>
      v === 'VAULT_ROLE_ID' ? new Secret(h.approle.roleId) : v === 'VAULT_SECRET_ID' ? new Secret('wrong-secret-id-canary') : undefined,
    );
    const config = http({
      namespace: 'team-a',
      path: 'tests/approle',
      auth: { method: 'approle', roleIdFrom: 'VAULT_ROLE_ID', secretIdFrom: 'VAULT_SECRET_ID' },
    });
    const error = await failure(client.write(config, new Secret('s'), meta(), {}));
    expect(error.message).toContain(
      'Vault refused an approle login (VAULT_ROLE_ID, VAULT_SECRET_ID) at auth/approle: 400 invalid role or secret ID',
    );
    expectNoLeak({ error: inspect(error), log: log.lines.join('') }, ['wrong-secret-id-canary', h.approle.roleId]);
  });

  it('never follows a redirect to another origin, so the token stays with Vault', async () => {
    const seen: string[] = [];
    const elsewhere = createServer((req, res) => {
      seen.push(String(req.headers['x-vault-token'] ?? ''));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    const standby = createServer((req, res) => {
      const port = (elsewhere.address() as AddressInfo).port;
      res.writeHead(307, { location: `http://localhost:${port}${req.url}` }).end();
    });
    await Promise.all([
      new Promise<void>((r) => elsewhere.listen(0, '127.0.0.1', r)),
      new Promise<void>((r) => standby.listen(0, '127.0.0.1', r)),
    ]);
    try {
      const config = configOf({ address: `http://127.0.0.1:${(standby.address() as AddressInfo).port}`, path: 'tests/redirected' });
      const error = await failure((await open()).read(config, {}));
      expect(error.message).toContain('with a redirect (307) to http://localhost:');
      expect(error.message).toContain('which is never followed (the token would go with it)');
      expect(seen).toEqual([]);
    } finally {
      elsewhere.close();
      standby.close();
    }
  });

  describe('preflight', () => {
    it('passes with the README policy and changes nothing: credentials, mount, ownership, capabilities', async () => {
      const config = http({ path: 'tests/preflight-ok' });
      const start = h.http.requests.length;
      await expect((await open()).preflight!(config, {})).resolves.toBeUndefined();
      expect(h.http.requests.slice(start).map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
        'GET auth/token/lookup-self 200',
        'GET sys/internal/ui/mounts/secret 200',
        'GET secret/data/tests/preflight-ok 404',
        'GET secret/metadata/tests/preflight-ok 404',
        'POST sys/capabilities-self 200',
      ]);
      expect(h.http.kv.get(at(config))).toBeUndefined();
    });

    it('fails for a token Vault does not know', async () => {
      h.http.revoke(token);
      const error = await failure((await open()).preflight!(http({ path: 'tests/p' }), {}));
      expect(error.message).toBe(
        `cannot write vault ${h.http.url} secret/tests/p[token]: Vault does not accept the token in VAULT_TOKEN (403 permission denied): it is expired, revoked or for another Vault or namespace`,
      );
    });

    it('fails for a KV version 1 mount, and for a mount that is not there', async () => {
      h.http.policy('kv1', 'path "kv1/*" { capabilities = ["read", "create", "update"] }');
      token = h.http.token({ policies: ['kv1'] });
      const v1 = await failure((await open()).preflight!(http({ mount: 'kv1', path: 'apps/ingest' }), {}));
      expect(v1.message).toContain(
        'kv1/ is a KV version 1 engine, which has no versions, check-and-set or custom metadata; upgrade it (vault kv enable-versioning kv1/)',
      );
      const none = await failure((await open()).preflight!(http({ mount: 'nothing-here', path: 'apps/ingest' }), {}));
      expect(none.message).toContain('no secrets engine at nothing-here/ that this token can see');
      expect(none.message).toContain('vault secrets enable -path=nothing-here kv-v2');
    });

    it('fails naming every capability the policy lacks, on which path', async () => {
      narrow(h.http, undefined, 'secret/data/tests/p-narrow', ['read']);
      narrow(h.http, undefined, 'secret/metadata/tests/p-narrow', ['read', 'update']);
      const error = await failure((await open()).preflight!(http({ path: 'tests/p-narrow' }), {}));
      expect(error.message).toBe(
        `cannot write vault ${h.http.url} secret/tests/p-narrow[token]: the token's policies lack "update", "create" on secret/data/tests/p-narrow (it has: read) ` +
          'and "patch" on secret/metadata/tests/p-narrow (it has: read, update); add them to the Vault policy of the token in VAULT_TOKEN',
      );
    });

    it('passes for a root token, and fails when a deny on the metadata path leaves the custom metadata unwritable', async () => {
      token = h.http.rootToken;
      await expect((await open()).preflight!(http({ path: 'tests/p-root' }), {})).resolves.toBeUndefined();
      token = h.http.token({ policies: ['token-rotator', 'breaks'] });
      narrow(h.http, undefined, 'secret/metadata/tests/p-denied', ['deny']);
      const error = await failure((await open()).preflight!(http({ path: 'tests/p-denied' }), {}));
      // The read of the metadata comes first, and its refusal is explained by the same look-up.
      expect(error.message).toBe(
        `cannot write vault ${h.http.url} secret/tests/p-denied[token]: Vault answered GET secret/metadata/tests/p-denied: 403 permission denied ` +
          '(the token\'s policies lack "read" on secret/metadata/tests/p-denied; it has: nothing; add "read" to the Vault policy of the token in VAULT_TOKEN)',
      );
      expect(h.http.kv.get({ path: 'tests/p-denied' })).toBeUndefined();
    });

    it('fails for a secret another tool manages, unless the sink adopts it', async () => {
      const config = http({ path: 'tests/p-foreign' });
      h.http.kv.put(at(config), { token: 'theirs' });
      const error = await failure((await open()).preflight!(config, {}));
      expect(error.message).toContain('it exists and is not managed by token-rotator (no managed-by custom metadata); set adopt: true');
      await expect((await open()).preflight!({ ...config, adopt: true }, {})).resolves.toBeUndefined();
    });
  });

  it('keeps canaries out of its log: debug lines name paths and statuses only', async () => {
    const config = http({ path: 'tests/log' });
    const client = await open();
    await client.write(config, new Secret('s3cret-canary-log-1'), meta(), {});
    await client.read(config, {});
    await client.write(config, new Secret('s3cret-canary-log-2'), meta({ rotationId: 'rot-2' }), {});
    expect(log.lines.length).toBeGreaterThan(0);
    expectNoLeak({ log: log.lines.join('') }, ['s3cret-canary-log-1', 's3cret-canary-log-2', token]);
  });
});

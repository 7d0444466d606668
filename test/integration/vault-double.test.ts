import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { Acl, parsePolicy } from '../doubles/vault/acl.js';
import { startVaultDouble, type VaultDouble } from '../doubles/vault/start-vault-double.js';

/*
 * The double's wire protocol, pinned to what Vault answers (hashicorp/vault-plugin-secrets-kv,
 * openbao/openbao): the sink's tests trust these answers, so they are checked here on their own.
 */

let v: VaultDouble;
let writer: string;

beforeAll(async () => {
  v = await startVaultDouble({ namespaces: ['team-a'] });
  v.mount('secret');
  v.mount('secret', { namespace: 'team-a' });
  v.policy(
    'writer',
    'path "secret/data/*" { capabilities = ["create", "read", "update"] }\npath "secret/metadata/*" { capabilities = ["read", "patch"] }',
  );
  writer = v.token({ policies: ['writer'] });
});
afterAll(() => v.close());

/** A body as the tests look into it: Vault's JSON, of no fixed shape here. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Body = Record<string, any>;

async function call(
  method: string,
  path: string,
  options: { token?: string; json?: unknown; namespace?: string; contentType?: string } = {},
) {
  const response = await fetch(`${v.url}/v1/${path}`, {
    method,
    headers: {
      ...(options.token !== undefined ? { 'x-vault-token': options.token } : { 'x-vault-token': v.rootToken }),
      ...(options.namespace ? { 'x-vault-namespace': options.namespace } : {}),
      ...(options.json !== undefined ? { 'content-type': options.contentType ?? 'application/json' } : {}),
    },
    ...(options.json !== undefined ? { body: JSON.stringify(options.json) } : {}),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Body) : undefined };
}

describe('the Vault double: KV version 2', () => {
  it('answers a missing secret 404 with empty errors, a write with its version, a second create by cas 0 with Vault’s text', async () => {
    expect(await call('GET', 'secret/data/wire/a')).toEqual({ status: 404, body: { errors: [] } });
    const created = await call('POST', 'secret/data/wire/a', { json: { options: { cas: 0 }, data: { token: 'one', user: 'svc' } } });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      lease_id: '',
      renewable: false,
      lease_duration: 0,
      wrap_info: null,
      warnings: null,
      auth: null,
      mount_type: 'kv',
      data: { version: 1, deletion_time: '', destroyed: false, custom_metadata: null },
    });
    expect(created.body?.data.created_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$/);
    expect(await call('POST', 'secret/data/wire/a', { json: { options: { cas: 0 }, data: { token: 'two' } } })).toEqual({
      status: 400,
      body: { errors: ['check-and-set parameter did not match the current version'] },
    });
    expect((await call('POST', 'secret/data/wire/a', { json: { options: { cas: 1 }, data: { token: 'two' } } })).body?.data.version).toBe(
      2,
    );
    const read = await call('GET', 'secret/data/wire/a');
    expect(read.body?.data).toMatchObject({ data: { token: 'two' }, metadata: { version: 2, custom_metadata: null } });
    expect((await call('GET', 'secret/data/wire/a?version=1')).body?.data.data).toEqual({ token: 'one', user: 'svc' });
    expect(await call('POST', 'secret/data/wire/a', { json: { options: {} } })).toEqual({
      status: 400,
      body: { errors: ['no data provided'] },
    });
  });

  it('requires check-and-set where the secret or the mount says so', async () => {
    await call('POST', 'secret/metadata/wire/cas', { json: { cas_required: true } });
    expect(await call('POST', 'secret/data/wire/cas', { json: { data: { a: 1 } } })).toEqual({
      status: 400,
      body: { errors: ['check-and-set parameter required for this call'] },
    });
    expect((await call('POST', 'secret/data/wire/cas', { json: { options: { cas: 0 }, data: { a: 1 } } })).status).toBe(200);
  });

  it('answers a deleted or destroyed latest version 404 with its metadata', async () => {
    await call('POST', 'secret/data/wire/del', { json: { data: { a: 1 } } });
    expect((await call('DELETE', 'secret/data/wire/del')).status).toBe(204);
    const deleted = await call('GET', 'secret/data/wire/del');
    expect(deleted.status).toBe(404);
    expect(deleted.body?.data).toMatchObject({ data: null, metadata: { version: 1, destroyed: false } });
    expect(deleted.body?.data.metadata.deletion_time).not.toBe('');
    v.kv.destroyLatest({ path: 'wire/del' });
    expect((await call('GET', 'secret/data/wire/del')).body?.data.metadata).toMatchObject({ version: 1, destroyed: true });
  });

  it('keeps max_versions versions, the oldest dropped', async () => {
    await call('POST', 'secret/metadata/wire/max', { json: { max_versions: 2 } });
    for (const n of [1, 2, 3]) await call('POST', 'secret/data/wire/max', { json: { data: { n } } });
    const meta = await call('GET', 'secret/metadata/wire/max');
    expect(meta.body?.data).toMatchObject({ current_version: 3, oldest_version: 2, max_versions: 2 });
    expect(Object.keys(meta.body?.data.versions).sort()).toEqual(['2', '3']);
    expect((await call('GET', 'secret/data/wire/max?version=1')).status).toBe(404);
    expect(v.kv.versions({ path: 'wire/max' })).toBe(3);
  });

  it('replaces custom_metadata on POST, merges it on PATCH (merge-patch only, null removes), within Vault’s limits', async () => {
    await call('POST', 'secret/data/wire/meta', { json: { data: { a: 1 } } });
    expect((await call('POST', 'secret/metadata/wire/meta', { json: { custom_metadata: { a: '1', b: '2' } } })).status).toBe(204);
    expect(await call('PATCH', 'secret/metadata/wire/meta', { json: { custom_metadata: { c: '3' } } })).toEqual({
      status: 415,
      body: { errors: ['PATCH requires Content-Type of application/merge-patch+json, provided application/json'] },
    });
    const patch = { contentType: 'application/merge-patch+json' };
    expect((await call('PATCH', 'secret/metadata/wire/meta', { ...patch, json: { custom_metadata: { b: null, c: '3' } } })).status).toBe(
      204,
    );
    expect((await call('GET', 'secret/data/wire/meta')).body?.data.metadata.custom_metadata).toEqual({ a: '1', c: '3' });
    expect(await call('PATCH', 'secret/metadata/wire/none', { ...patch, json: { custom_metadata: { a: '1' } } })).toEqual({
      status: 404,
      body: { errors: [] },
    });
    const tooMany = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v']));
    expect(await call('POST', 'secret/metadata/wire/meta', { json: { custom_metadata: tooMany } })).toEqual({
      status: 400,
      body: { errors: ['1 error occurred:\n\t* custom_metadata validation failed: payload must contain at most 64 keys, provided 65\n\n'] },
    });
    const long = await call('POST', 'secret/metadata/wire/meta', { json: { custom_metadata: { k: 'x'.repeat(513) } } });
    expect(long.body?.errors[0]).toContain('length of value for key "k" is 513 but must be 0 < len(value) <= 512');
  });
});

describe('the Vault double: tokens, policies, logins', () => {
  it('refuses an unknown token and a denied path with 403 permission denied; create or update by existence', async () => {
    expect(await call('GET', 'secret/data/wire/a', { token: 'hvs.nope' })).toEqual({
      status: 403,
      body: { errors: ['permission denied'] },
    });
    expect(await call('GET', 'kv/data/x', { token: writer })).toEqual({
      status: 403,
      body: { errors: ['1 error occurred:\n\t* permission denied\n\n'] },
    });
    v.policy('updater', 'path "secret/data/*" { capabilities = ["update"] }');
    const updater = v.token({ policies: ['updater'] });
    expect((await call('POST', 'secret/data/wire/new-by-update', { token: updater, json: { data: { a: 1 } } })).status).toBe(403);
    expect((await call('POST', 'secret/data/wire/a', { token: updater, json: { data: { a: 1 } } })).status).toBe(200);
    expect(
      v.requests
        .filter((r) => r.path.startsWith('secret/data/wire/') && r.method === 'POST')
        .slice(-2)
        .map((r) => r.operation),
    ).toEqual(['create', 'update']);
  });

  it('answers sys/capabilities-self as Vault does: per path, at the top level too, deny for none, root for root', async () => {
    const both = await call('POST', 'sys/capabilities-self', { token: writer, json: { paths: ['secret/data/x', 'secret/metadata/x'] } });
    expect(both.body?.data).toEqual({ 'secret/data/x': ['create', 'read', 'update'], 'secret/metadata/x': ['patch', 'read'] });
    expect(both.body?.['secret/data/x']).toEqual(['create', 'read', 'update']);
    const one = await call('POST', 'sys/capabilities-self', { token: writer, json: { paths: ['sys/mounts'] } });
    expect(one.body?.data).toEqual({ 'sys/mounts': ['deny'], capabilities: ['deny'] });
    expect((await call('POST', 'sys/capabilities-self', { json: { paths: ['any/path'] } })).body?.data.capabilities).toEqual(['root']);
  });

  it('matches paths by Vault’s priorities: exact, then the better of a glob and + segments', () => {
    const acl = new Acl(
      parsePolicy(`
        path "secret/data/*" { capabilities = ["read"] }
        path "secret/data/apps/+/token" { capabilities = ["update"] }
        path "secret/data/apps/a*" { capabilities = ["create"] }
        path "secret/data/apps/exact" { capabilities = ["patch"] }
        path "secret/data/apps/denied" { capabilities = ["deny"] }
        # a comment
        path "secret/data/apps/denied" { capabilities = ["read"] }
      `),
    );
    expect(acl.capabilities('secret/data/apps/exact')).toEqual(['patch']);
    expect(acl.capabilities('secret/data/apps/x/token')).toEqual(['update']);
    expect(acl.capabilities('secret/data/apps/ab')).toEqual(['create']);
    expect(acl.capabilities('secret/data/other')).toEqual(['read']);
    expect(acl.capabilities('secret/data/apps/denied')).toEqual(['deny']);
    expect(acl.capabilities('secret/metadata/x')).toEqual(['deny']);
  });

  it('keeps namespaces apart: a token works in its own, and each has its own secrets', async () => {
    v.policy('writer', 'path "secret/*" { capabilities = ["create", "read", "update"] }', 'team-a');
    const teamA = v.token({ policies: ['writer'], namespace: 'team-a' });
    expect((await call('POST', 'secret/data/ns', { token: teamA, namespace: 'team-a', json: { data: { a: 'team' } } })).status).toBe(200);
    expect((await call('GET', 'secret/data/ns', { token: teamA })).status).toBe(403);
    expect((await call('GET', 'secret/data/ns')).status).toBe(404);
    expect(v.kv.get({ path: 'ns', namespace: 'team-a' })?.data).toEqual({ a: 'team' });
  });

  it('logs in with kubernetes and approle, answering an auth block or Vault’s refusals', async () => {
    v.kubernetes.enable();
    v.kubernetes.role('r', {
      boundServiceAccountNames: ['sa'],
      boundServiceAccountNamespaces: ['ns'],
      policies: ['writer'],
      ttlSeconds: 600,
    });
    const jwt = v.kubernetes.serviceAccountToken('ns', 'sa');
    const login = await call('POST', 'auth/kubernetes/login', { token: '', json: { role: 'r', jwt } });
    expect(login.body?.auth).toMatchObject({
      policies: ['default', 'writer'],
      token_policies: ['default', 'writer'],
      lease_duration: 600,
      renewable: true,
      metadata: { role: 'r', service_account_name: 'sa', service_account_namespace: 'ns' },
    });
    const token = login.body?.auth.client_token as string;
    expect((await call('GET', 'auth/token/lookup-self', { token })).body?.data).toMatchObject({
      id: token,
      policies: ['default', 'writer'],
      creation_ttl: 600,
    });
    expect(await call('POST', 'auth/kubernetes/login', { token: '', json: { role: 'nope', jwt } })).toEqual({
      status: 400,
      body: { errors: ['invalid role name "nope"'] },
    });
    const stranger = v.kubernetes.serviceAccountToken('ns', 'other');
    expect(await call('POST', 'auth/kubernetes/login', { token: '', json: { role: 'r', jwt: stranger } })).toEqual({
      status: 403,
      body: { errors: ['service account name not authorized'] },
    });
    expect((await call('POST', 'auth/kubernetes/login', { token: '', json: { role: 'r', jwt: 'eyJ.forged.jwt' } })).status).toBe(403);

    v.approle.enable();
    const { roleId, secretId } = v.approle.role('app', { policies: ['writer'] });
    expect(
      (await call('POST', 'auth/approle/login', { token: '', json: { role_id: roleId, secret_id: secretId } })).body?.auth.policies,
    ).toEqual(['default', 'writer']);
    expect(await call('POST', 'auth/approle/login', { token: '', json: { role_id: roleId, secret_id: 'wrong' } })).toEqual({
      status: 400,
      body: { errors: ['invalid role or secret ID'] },
    });
  });

  it('tells a token that can see a mount its type and KV version, and no more to one that cannot', async () => {
    const seen = await call('GET', 'sys/internal/ui/mounts/secret', { token: writer });
    expect(seen.body?.data).toMatchObject({ type: 'kv', options: { version: '2' }, path: 'secret/' });
    expect(seen.body?.options).toEqual({ version: '2' });
    v.policy('nothing', 'path "other/*" { capabilities = ["read"] }');
    expect(await call('GET', 'sys/internal/ui/mounts/secret', { token: v.token({ policies: ['nothing'] }) })).toEqual({
      status: 403,
      body: { errors: ['preflight capability check returned 403, please ensure client\'s policies grant access to path "secret/"'] },
    });
  });
});

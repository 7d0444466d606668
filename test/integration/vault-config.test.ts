import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { vaultSinkType } from '../../src/sinks/vault/vault-sink.js';

const policyDir = '/etc/token-rotator';
const parse = (raw: Record<string, unknown>, env: Record<string, string> = {}) =>
  vaultSinkType.parse({ type: 'vault', ...raw }, { policyDir, env });
const config = (raw: Record<string, unknown>, env: Record<string, string> = {}) => {
  const parsed = parse(raw, env);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.config;
};
const issues = (raw: Record<string, unknown>, env: Record<string, string> = {}) => {
  const parsed = parse(raw, env);
  return parsed.ok ? [] : parsed.issues;
};

describe('the vault sink config', () => {
  it('takes the issue’s example with its defaults: mount secret, key token, token auth from VAULT_TOKEN', () => {
    expect(config({ address: 'https://vault:8200', path: 'apps/ingest' })).toEqual({
      type: 'vault',
      address: 'https://vault:8200',
      mount: 'secret',
      path: 'apps/ingest',
      key: 'token',
      auth: { method: 'token', tokenFrom: 'VAULT_TOKEN' },
      adopt: false,
    });
    expect(
      config({
        address: 'https://vault:8200',
        mount: 'kv/team',
        path: 'apps/ingest',
        key: 'api-token',
        auth: { method: 'kubernetes', role: 'token-rotator' },
      }).auth,
    ).toEqual({
      method: 'kubernetes',
      role: 'token-rotator',
      mount: 'kubernetes',
      jwtFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
    });
  });

  it('takes VAULT_ADDR, VAULT_NAMESPACE and VAULT_CACERT when the sink does not say, and the sink’s own fields over them', () => {
    const env = { VAULT_ADDR: 'https://vault.internal:8200/', VAULT_NAMESPACE: '/team-a/', VAULT_CACERT: '/etc/ssl/vault-ca.pem' };
    expect(config({ path: 'apps/ingest' }, env)).toMatchObject({
      address: 'https://vault.internal:8200',
      namespace: 'team-a',
      caCertFile: '/etc/ssl/vault-ca.pem',
    });
    expect(
      config({ path: 'apps/ingest', address: 'https://other:8200', namespace: 'team-b', caCertFile: 'certs/ca.pem' }, env),
    ).toMatchObject({
      address: 'https://other:8200',
      namespace: 'team-b',
      caCertFile: '/etc/token-rotator/certs/ca.pem',
    });
  });

  it('names every problem at once, with its path', () => {
    expect(issues({ mount: '/secret/', path: '../etc', key: '', auth: { method: 'kubernetes' }, colour: 'red' })).toEqual(
      expect.arrayContaining([
        { path: 'address', message: 'required here: the sink names no address, and VAULT_ADDR is not set' },
        { path: 'mount', message: 'must not start or end with /: write the mount as `secret`' },
        { path: 'path', message: 'must not have an empty, "." or ".." segment' },
        { path: 'key', message: 'must not be empty' },
        { path: 'auth.role', message: 'required' },
        {
          path: 'colour',
          message: expect.stringContaining('unknown key (allowed: type, address, namespace, caCertFile, mount, path, key, auth, adopt'),
        },
      ]),
    );
    expect(issues({ address: 'https://vault:8200', path: 'a', auth: { method: 'approle', roleIdFrom: 'role_id' } })).toEqual([
      { path: 'auth.roleIdFrom', message: expect.stringContaining('must be the name of an environment variable') },
      { path: 'auth.secretIdFrom', message: 'required' },
    ]);
    expect(issues({ address: 'https://vault:8200', path: 'a', auth: { method: 'ldap' } })).toEqual([
      { path: 'auth.method', message: 'must be one of: "token", "kubernetes", "approle"' },
    ]);
  });

  it('sends the token over https only, or plain http on loopback, and refuses a user name in the address', () => {
    expect(issues({ address: 'http://vault:8200', path: 'a' })).toEqual([
      { path: 'address', message: 'must be an https:// URL (plain http only on loopback: the token travels with every request)' },
    ]);
    expect(issues({ path: 'a' }, { VAULT_ADDR: 'http://vault.example.com' })).toEqual([
      {
        path: 'address',
        message: 'VAULT_ADDR must be an https:// URL (plain http only on loopback: the token travels with every request)',
      },
    ]);
    expect(issues({ address: 'https://admin:hunter2-canary@vault:8200', path: 'a' })).toEqual([
      { path: 'address', message: 'must not carry a user name or password; the token comes by auth' },
    ]);
    expect(config({ address: 'http://127.0.0.1:8200', path: 'a' }).address).toBe('http://127.0.0.1:8200');
  });

  it('names the credentials it takes by reference, to be checked before any network call', () => {
    const refs = (auth?: Record<string, unknown>) =>
      vaultSinkType.references!(config({ address: 'https://vault:8200', path: 'a', ...(auth ? { auth } : {}) }));
    expect(refs()).toEqual([{ path: 'auth.tokenFrom', variable: 'VAULT_TOKEN' }]);
    expect(refs({ method: 'token', tokenFrom: 'INGEST_VAULT_TOKEN' })).toEqual([
      { path: 'auth.tokenFrom', variable: 'INGEST_VAULT_TOKEN' },
    ]);
    expect(refs({ method: 'approle', roleIdFrom: 'VAULT_ROLE_ID', secretIdFrom: 'VAULT_SECRET_ID' })).toEqual([
      { path: 'auth.roleIdFrom', variable: 'VAULT_ROLE_ID' },
      { path: 'auth.secretIdFrom', variable: 'VAULT_SECRET_ID' },
    ]);
    expect(refs({ method: 'kubernetes', role: 'r' })).toEqual([]);
  });

  it('identifies a destination by address, namespace, mount and path; the key is no part of it', () => {
    const one = config({ address: 'https://vault:8200', path: 'apps/ingest' });
    expect(vaultSinkType.describe(one)).toBe('vault https://vault:8200 secret/apps/ingest[token]');
    expect(vaultSinkType.target(one)).toBe('vault:https://vault:8200/secret/apps/ingest');
    expect(vaultSinkType.target(config({ address: 'https://vault:8200', path: 'apps/ingest', key: 'other' }))).toBe(
      vaultSinkType.target(one),
    );
    const namespaced = config({ address: 'https://vault:8200', namespace: 'team-a', path: 'apps/ingest' });
    expect(vaultSinkType.target(namespaced)).toBe('vault:https://vault:8200/team-a/secret/apps/ingest');
    expect(vaultSinkType.describe(namespaced)).toBe('vault https://vault:8200 team-a/secret/apps/ingest[token]');
  });

  it('loads no HTTP client with the type: only open() imports the client module', () => {
    for (const file of ['vault-sink.ts', 'vault-sink-config.ts']) {
      const source = readFileSync(fileURLToPath(new URL(`../../src/sinks/vault/${file}`, import.meta.url)), 'utf8');
      const imports = [...source.matchAll(/^import[^;]*?from '([^']+)'/gms)].map((m) => m[1]);
      expect(
        imports.filter((i) => i === 'got' || i!.includes('vault-http') || i!.includes('vault-client')),
        file,
      ).toEqual([]);
    }
  });
});

import { writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { parsePolicy } from '../../src/config/load-policy.js';
import type { Policy } from '../../src/config/types.js';
import { ConfigError } from '../../src/errors.js';
import { sinkTarget, upgradeStoredTarget } from '../../src/sinks/registry.js';
import { resolveLineage } from '../../src/state/lineage.js';
import { withUpgradedTargets } from '../../src/state/upgraded-targets.js';
import { MemoryStateStorage } from '../fakes/memory-state-backend.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/*
 * One canonical identity per destination (issue 20): every spelling of one destination has one
 * target, two sinks on one destination are refused naming both, and targets in the form entries and
 * records were written with before still name their sinks.
 */

const FILE = '/etc/rotator/rotation.yaml';
const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret';

/** One token per list of sinks, read as `validate` reads it. */
function policyOf(sinksPerToken: unknown[][], env: Record<string, string> = {}): Policy {
  const tokens = sinksPerToken.map((sinks, i) => ({ name: `t${i}`, id: `id${i}`, sinks }));
  return parsePolicy(JSON.stringify({ version: 1, tokens }), FILE, { env });
}

function problemsOf(sinksPerToken: unknown[][], env: Record<string, string> = {}): string[] {
  try {
    policyOf(sinksPerToken, env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
}

const warningsOf = (sinksPerToken: unknown[][], env: Record<string, string> = {}) =>
  policyOf(sinksPerToken, env).warnings.map((w) => `${w.path}: ${w.message}`);

const targetOf = (sink: unknown, env: Record<string, string> = {}) => sinkTarget(policyOf([[sink]], env).tokens[0]!.sinks[0]!);

/** Each sink in a token of its own: the first is refused as the same place as the second's. */
const sameAs = (a: unknown, b: unknown, env: Record<string, string> = {}) => problemsOf([[a], [b]], env);

describe('AWS Secrets Manager: a name, a full ARN and a partial ARN', () => {
  const aws = (secretId: string, more: Record<string, unknown> = {}) => ({ type: 'aws-secrets-manager', secretId, ...more });

  it('has one target per secret: a full and a partial ARN alike, the key no part of it', () => {
    expect(targetOf(aws(`${ARN}:prod/x-AbCdEf`))).toBe('aws-secrets-manager:eu-west-1:123456789012:prod/x');
    expect(targetOf(aws(`${ARN}:prod/x`, { key: 'token' }))).toBe('aws-secrets-manager:eu-west-1:123456789012:prod/x');
    // A name keeps the form it always had: what older entries and records hold already.
    expect(targetOf(aws('prod/x', { region: 'eu-west-1' }))).toBe('aws-secrets-manager:eu-west-1:prod/x');
    expect(targetOf(aws('prod/x'), { AWS_REGION: 'eu-west-1' })).toBe('aws-secrets-manager::prod/x');
  });

  it('refuses a name and its ARN in one region, whether the sink, the ARN or AWS_REGION says the region', () => {
    const refused = 'tokens[1].sinks[0]: writes to the same place as tokens[0].sinks[0]: both are the secret prod/x in eu-west-1';
    expect(sameAs(aws('prod/x', { region: 'eu-west-1' }), aws(`${ARN}:prod/x-AbCdEf`))).toEqual([refused]);
    expect(sameAs(aws('prod/x'), aws(`${ARN}:prod/x`), { AWS_REGION: 'eu-west-1' })).toEqual([refused]);
    expect(sameAs(aws('prod/x', { region: 'eu-west-1' }), aws('prod/x'), { AWS_REGION: 'eu-west-1' })).toEqual([refused]);
    // A partial ARN of `my-secret` ends as a full ARN of `my` would: it is still my-secret's.
    expect(sameAs(aws('my-secret', { region: 'eu-west-1' }), aws(`${ARN}:my-secret`))).toEqual([
      'tokens[1].sinks[0]: writes to the same place as tokens[0].sinks[0]: both are the secret my-secret in eu-west-1',
    ]);
    // Two sinks of one token as well: they would share one journal mark.
    expect(problemsOf([[aws('prod/x', { region: 'eu-west-1' }), aws(`${ARN}:prod/x`)]])).toEqual([
      'tokens[0].sinks[1]: writes to the same place as tokens[0].sinks[0]: both are the secret prod/x in eu-west-1',
    ]);
    expect(sameAs(aws(`${ARN}:prod/x-AbCdEf`), aws(`${ARN}:prod/x`))).toEqual([
      'tokens[1].sinks[0]: writes to the same place as tokens[0].sinks[0]',
    ]);
  });

  it('takes another region or another account for another secret', () => {
    expect(sameAs(aws('prod/x', { region: 'us-east-1' }), aws(`${ARN}:prod/x`))).toEqual([]);
    expect(sameAs(aws('prod/x'), aws(`${ARN}:prod/x`), { AWS_REGION: 'us-east-1' })).toEqual([]);
    expect(sameAs(aws(`${ARN}:prod/x`), aws('arn:aws:secretsmanager:eu-west-1:210987654321:secret:prod/x-AbCdEf'))).toEqual([]);
    expect(sameAs(aws('prod/x', { region: 'eu-west-1' }), aws(`${ARN}:prod/y`))).toEqual([]);
  });

  it('warns, and leaves to validate --online, a name whose region only the AWS profile says', () => {
    expect(warningsOf([[aws('prod/x')], [aws(`${ARN}:prod/x`)]])).toEqual([
      'tokens[1].sinks[0]: may write to the same place as tokens[0].sinks[0]: both are the secret prod/x if the region ' +
        'the AWS SDK takes from its profile is eu-west-1 (set region on the sink to say); validate --online asks the service',
    ]);
  });

  it('reads a target written with the whole ARN, as before, in the new form', () => {
    const config = policyOf([[aws(`${ARN}:prod/x-AbCdEf`)]]).tokens[0]!.sinks[0]!;
    expect(upgradeStoredTarget(`aws-secrets-manager:eu-west-1:${ARN}:prod/x-AbCdEf`)).toBe(sinkTarget(config));
    for (const current of ['aws-secrets-manager:eu-west-1:prod/x', 'aws-secrets-manager::prod/x', sinkTarget(config)])
      expect(upgradeStoredTarget(current)).toBe(current);
  });
});

describe('Vault: address, namespace, mount and path', () => {
  const vault = (more: Record<string, unknown>) => ({ type: 'vault', address: 'https://vault.example.com:8200', path: 'apps/x', ...more });

  it('is one secret however the namespace is slashed, wherever it is given, and whatever case the host', () => {
    const target = 'vault:https://vault.example.com:8200/team-a/apps/secret/apps/x';
    expect(targetOf(vault({ namespace: 'team-a/apps' }))).toBe(target);
    expect(targetOf(vault({ namespace: '/team-a//apps/' }))).toBe(target);
    expect(targetOf(vault({}), { VAULT_NAMESPACE: 'team-a/apps/' })).toBe(target);
    // Vault reads a namespace given in the path as it reads the header.
    expect(targetOf(vault({ namespace: 'team-a', mount: 'apps/secret' }))).toBe(target);
    expect(targetOf(vault({ address: 'HTTPS://Vault.Example.com:8200/', namespace: 'team-a/apps' }))).toBe(target);
    expect(targetOf(vault({ address: 'https://vault.example.com:443/' }))).toBe('vault:https://vault.example.com/secret/apps/x');
    expect(sameAs(vault({ namespace: 'team-a/apps' }), vault({ namespace: '/team-a//apps/', key: 'other' }))).toEqual([
      'tokens[1].sinks[0]: writes to the same place as tokens[0].sinks[0]',
    ]);
    // The namespace sent is the normal one too.
    expect(policyOf([[vault({ namespace: '/team-a//apps/' })]]).tokens[0]!.sinks[0]).toMatchObject({ namespace: 'team-a/apps' });
  });

  it('refuses the KV version 2 API path in place of the secret path, which would write another secret', () => {
    expect(problemsOf([[vault({ path: 'data/apps/x' })]])).toEqual([
      "tokens[0].sinks[0].path: starts with the KV version 2 API's data/ or metadata/: write the path inside the mount " +
        '(apps/ingest for secret/data/apps/ingest); token-rotator adds them itself',
    ]);
    expect(problemsOf([[vault({ path: 'metadata/apps/x' })]])).toHaveLength(1);
    expect(problemsOf([[vault({ path: 'apps/data/x' })], [vault({ path: 'data' })]])).toEqual([]);
  });

  it('reads a target written with a namespace as it was given, as before, in the new form', () => {
    expect(upgradeStoredTarget('vault:https://vault.example.com:8200/team-a//secret/apps/x')).toBe(
      targetOf(vault({ namespace: 'team-a/' })),
    );
    expect(upgradeStoredTarget('vault:https://vault.example.com:8200/secret/apps/x')).toBe(
      'vault:https://vault.example.com:8200/secret/apps/x',
    );
  });
});

describe('Kubernetes Secret: the default namespace', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await makeTempDir();
    writeFileSync(
      join(dir, 'kubeconfig'),
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{ name: c, cluster: { server: "https://127.0.0.1:6443" } }]',
        'contexts: [{ name: ctx, context: { cluster: c, user: u, namespace: apps } }]',
        'current-context: ctx',
        'users: [{ name: u, user: { token: abc } }]',
      ].join('\n'),
    );
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('is resolved from the kubeconfig context: a Secret named without a namespace and with it is one', () => {
    const env = { KUBECONFIG: join(dir, 'kubeconfig') };
    expect(targetOf({ type: 'kubernetes-secret', name: 'ingest' }, env)).toBe('kubernetes-secret:apps/ingest');
    expect(
      sameAs(
        { type: 'kubernetes-secret', name: 'ingest' },
        { type: 'kubernetes-secret', name: 'ingest', namespace: 'apps', key: 'k' },
        env,
      ),
    ).toEqual(['tokens[1].sinks[0]: writes to the same place as tokens[0].sinks[0]']);
  });
});

describe('Azure Key Vault: the vault URL and the name', () => {
  const azure = (vaultUrl: string, name = 'ingest-token') => ({ type: 'azure-key-vault', vaultUrl, name });

  it('is one secret whatever the case, a default port, a trailing slash or a trailing dot', () => {
    const target = 'azure-key-vault:myvault.vault.azure.net/ingest-token';
    expect(targetOf(azure('https://MyVault.Vault.Azure.net:443/', 'Ingest-Token'))).toBe(target);
    expect(targetOf(azure('https://myvault.vault.azure.net.'))).toBe(target);
    expect(targetOf(azure('https://myvault.vault.azure.net:8443'))).toBe('azure-key-vault:myvault.vault.azure.net:8443/ingest-token');
    expect(upgradeStoredTarget('azure-key-vault:myvault.vault.azure.net./ingest-token')).toBe(target);
  });
});

describe('Google Secret Manager: project and secret', () => {
  const gcp = (project: string, secret = 'ingest', more: Record<string, unknown> = {}) => ({
    type: 'gcp-secret-manager',
    project,
    secret,
    ...more,
  });

  it('refuses a resource name for the secret id, saying how to write it', () => {
    expect(problemsOf([[gcp('my-project', 'projects/my-project/secrets/ingest')]])).toEqual([
      'tokens[0].sinks[0].secret: is a resource name: write project: "my-project" and secret: "ingest"',
    ]);
  });

  it('is one secret by any endpoint; a project id and a number may be one project, which only Google says', () => {
    expect(sameAs(gcp('my-project'), gcp('my-project', 'ingest', { endpoint: 'secretmanager-psc.p.googleapis.com' }))).toEqual([
      'tokens[1].sinks[0]: writes to the same place as tokens[0].sinks[0]',
    ]);
    expect(warningsOf([[gcp('my-project')], [gcp('424242424242')]])).toEqual([
      'tokens[1].sinks[0]: may write to the same place as tokens[0].sinks[0]: both are the secret ingest if project my-project ' +
        'is project number 424242424242; validate --online asks the service',
    ]);
    expect(warningsOf([[gcp('my-project')], [gcp('other-project')], [gcp('424242424242', 'other')]])).toEqual([]);
  });
});

describe('files', () => {
  it('are one destination by their real path', () => {
    expect(sameAs({ type: 'file', path: 'secrets/../app.token' }, { type: 'file', path: 'app.token', format: 'json' })).toEqual([
      'tokens[1].sinks[0]: writes to the same place as tokens[0].sinks[0]',
    ]);
  });
});

describe('state written with the earlier form of a target', () => {
  it('is read in the new form: a journal entry still marks its delivery, a record still knows its sink', async () => {
    const old = `aws-secrets-manager:eu-west-1:${ARN}:prod/x-AbCdEf`;
    const now = new Date('2026-11-22T12:00:00.000Z');
    const storage = new MemoryStateStorage();
    const raw = storage.open();
    const given = { fingerprint: 'hmac-sha256:abc', at: now.toISOString(), how: 'delivered' as const };
    const record = resolveLineage({ name: 'ingest', id: 'p1' }, undefined, now).record;
    await raw.state.write({ ...record, sinks: { [old]: given, 'file:/srv/app.token': given } });
    await raw.journal.write({
      version: 1,
      name: 'ingest',
      phase: 'intent',
      reason: 'due',
      startedAt: now.toISOString(),
      oldId: 'p1',
      oldExpiresAt: null,
      existingTokenExpiresAt: now.toISOString(),
      newTokenExpiresAt: null,
      delivered: [old, 'file:/srv/app.token'],
    });

    const backend = withUpgradedTargets(storage.open(), upgradeStoredTarget);
    const target = 'aws-secrets-manager:eu-west-1:123456789012:prod/x';
    expect((await backend.state.read('ingest'))?.sinks).toEqual({ [target]: given, 'file:/srv/app.token': given });
    expect((await backend.journal.read('ingest'))?.delivered).toEqual([target, 'file:/srv/app.token']);
    expect(await backend.state.read('missing')).toBeUndefined();
  });
});

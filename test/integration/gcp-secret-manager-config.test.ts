import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { crc32c } from '../../src/sinks/gcp-secret-manager/crc32c.js';
import { gcpSecretManagerSinkType } from '../../src/sinks/gcp-secret-manager/gcp-secret-manager-sink.js';
import { crc32cBitwise } from '../doubles/gcp-secret-manager/rules.js';

const parse = (raw: Record<string, unknown>, env: Record<string, string> = {}) =>
  gcpSecretManagerSinkType.parse({ type: 'gcp-secret-manager', ...raw }, { policyDir: '/etc/rotator', env });

const problems = (raw: Record<string, unknown>, env: Record<string, string> = {}) => {
  const parsed = parse(raw, env);
  if (parsed.ok) throw new Error('expected the sink to be refused');
  return parsed.issues.map((issue) => `${issue.path}: ${issue.message}`);
};

describe('the gcp-secret-manager sink configuration', () => {
  it('normalises a full configuration, and says where it writes without naming any credential', () => {
    const parsed = parse({
      project: 'my-project',
      secret: 'ingest-token',
      locations: ['europe-west1', 'europe-west4'],
      labels: { team: 'ingest' },
      endpoint: 'https://secretmanager-psc.p.googleapis.com',
    });
    expect(parsed).toEqual({
      ok: true,
      config: {
        type: 'gcp-secret-manager',
        project: 'my-project',
        secret: 'ingest-token',
        locations: ['europe-west1', 'europe-west4'],
        labels: { team: 'ingest' },
        endpoint: 'secretmanager-psc.p.googleapis.com:443',
        adopt: false,
      },
    });
    const config = (parsed as { config: Parameters<typeof gcpSecretManagerSinkType.describe>[0] }).config;
    expect(gcpSecretManagerSinkType.describe(config)).toBe('gcp-secret-manager projects/my-project/secrets/ingest-token');
    // The endpoint is a way to the secret, not part of which secret it is.
    expect(gcpSecretManagerSinkType.target(config)).toBe(gcpSecretManagerSinkType.target({ ...config, endpoint: undefined }));
    expect(gcpSecretManagerSinkType.references).toBeUndefined();
  });

  it('takes the project from GOOGLE_CLOUD_PROJECT when the sink names none, and says so when neither does', () => {
    expect(parse({ secret: 's' }, { GOOGLE_CLOUD_PROJECT: 'from-env-project' })).toMatchObject({
      ok: true,
      config: { project: 'from-env-project', locations: [], labels: {}, endpoint: undefined },
    });
    expect(parse({ project: 'given-project', secret: 's' }, { GOOGLE_CLOUD_PROJECT: 'from-env-project' })).toMatchObject({
      config: { project: 'given-project' },
    });
    expect(problems({ secret: 's' })).toEqual(['project: required: set project on the sink, or GOOGLE_CLOUD_PROJECT in the environment']);
    expect(problems({ secret: 's' }, { GOOGLE_CLOUD_PROJECT: 'Not A Project' })).toEqual([
      'project: not set, and GOOGLE_CLOUD_PROJECT is not a project id or number',
    ]);
    // A project number, and a domain-scoped project id, are projects too.
    expect(parse({ project: '123456789012', secret: 's' }).ok).toBe(true);
    expect(parse({ project: 'example.com:my-project', secret: 's' }).ok).toBe(true);
  });

  it("holds labels to Secret Manager's rules, and keeps its own label to itself", () => {
    expect(
      problems({
        project: 'my-project',
        secret: 'bad id!',
        labels: { Team: 'x', ok: 'UPPER', 'managed-by': 'someone', ['a'.repeat(64)]: 'x' },
      }),
    ).toEqual([
      'secret: must be a secret id: at most 255 letters, digits, "-" and "_"',
      'labels.Team: must be a label key: a lowercase letter, then up to 62 lowercase letters, digits, "_" and "-"',
      'labels.ok: must be a label value: at most 63 lowercase letters, digits, "_" and "-"',
      'labels.managed-by: is set by token-rotator itself',
      `labels.${'a'.repeat(64)}: must be a label key: a lowercase letter, then up to 62 lowercase letters, digits, "_" and "-"`,
    ]);
    // International lowercase letters are label characters too.
    expect(parse({ project: 'my-project', secret: 's', labels: { équipe: 'données' } }).ok).toBe(true);
  });

  it('refuses locations that cannot be replicas, endpoints that are not host[:port], and unknown keys', () => {
    expect(problems({ project: 'my-project', secret: 's', locations: [] })).toEqual([
      'locations: must name at least one location; leave it out for automatic replication',
    ]);
    expect(problems({ project: 'my-project', secret: 's', locations: ['europe-west1', 'europe-west1'] })).toEqual([
      'locations: names a location twice',
    ]);
    expect(problems({ project: 'my-project', secret: 's', endpoint: 'http://localhost:8080' })[0]).toMatch(
      /^endpoint: must be host\[:port\]/,
    );
    expect(problems({ project: 'my-project', secret: 's', endpoint: 'localhost:99999' })).toEqual([
      'endpoint: has a port outside 1 to 65535',
    ]);
    expect(problems({ project: 'my-project', secret: 's', region: 'eu' })).toEqual([
      'region: unknown key (allowed: type, project, secret, locations, labels, endpoint, adopt)',
    ]);
  });

  it('keeps the SDK out of the type module: only the client imports it', () => {
    // `--version`, `validate` and a files-only daemon load the type with every policy.
    const dir = fileURLToPath(new URL('../../src/sinks/gcp-secret-manager/', import.meta.url));
    for (const file of ['gcp-secret-manager-sink.ts', 'gcp-secret-manager-config.ts']) {
      const imports = [...readFileSync(dir + file, 'utf8').matchAll(/^import .* from '([^']+)';$/gm)].map((m) => m[1]);
      expect(
        imports.filter((from) => !from!.startsWith('.') && from !== 'zod'),
        file,
      ).toEqual([]);
      expect(imports, file).not.toContain('./gcp-secret-manager-client.js');
    }
  });

  it('computes CRC32C as Secret Manager does, as an independent bit-by-bit version does', () => {
    // The check value of CRC-32C (Castagnoli): "123456789" -> 0xE3069283.
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
    expect(crc32cBitwise(Buffer.from('123456789'))).toBe(0xe3069283);
    expect(crc32c(Buffer.alloc(0))).toBe(0);
    const text = Buffer.from('xaat-canary-crc-ü-€-𝄞');
    expect(crc32c(text)).toBe(crc32cBitwise(text));
  });
});

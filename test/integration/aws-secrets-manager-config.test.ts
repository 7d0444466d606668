import { describe, expect, it } from 'vitest';

import { awsSecretsManagerSinkType } from '../../src/sinks/aws-secrets-manager/aws-secrets-manager-sink.js';

const parse = (raw: Record<string, unknown>) =>
  awsSecretsManagerSinkType.parse({ type: 'aws-secrets-manager', ...raw }, { policyDir: '/' });
const issues = (raw: Record<string, unknown>) => {
  const parsed = parse(raw);
  return parsed.ok ? [] : parsed.issues;
};

describe('aws-secrets-manager sink configuration', () => {
  it('takes the issue’s example, with defaults for what it leaves out', () => {
    expect(
      parse({ secretId: 'prod/ingest', region: 'eu-west-1', key: 'token', tags: { team: 'ingest' }, kmsKeyId: 'alias/ingest' }),
    ).toEqual({
      ok: true,
      config: {
        type: 'aws-secrets-manager',
        secretId: 'prod/ingest',
        region: 'eu-west-1',
        key: 'token',
        tags: { team: 'ingest' },
        kmsKeyId: 'alias/ingest',
        adopt: false,
      },
    });
    expect(parse({ secretId: 'prod/ingest' })).toMatchObject({
      ok: true,
      config: { region: undefined, key: undefined, tags: {}, adopt: false },
    });
  });

  it('describes and identifies the secret by region and id, without the key in the identity', () => {
    const config = (raw: Record<string, unknown>) => {
      const parsed = parse(raw);
      if (!parsed.ok) throw new Error('invalid');
      return parsed.config;
    };
    const keyed = config({ secretId: 'prod/ingest', region: 'eu-west-1', key: 'token' });
    expect(awsSecretsManagerSinkType.describe(keyed)).toBe('aws-secrets-manager prod/ingest[token] (eu-west-1)');
    expect(awsSecretsManagerSinkType.target(keyed)).toBe(
      awsSecretsManagerSinkType.target(config({ secretId: 'prod/ingest', region: 'eu-west-1' })),
    );
    expect(awsSecretsManagerSinkType.target(keyed)).not.toBe(
      awsSecretsManagerSinkType.target(config({ secretId: 'prod/ingest', region: 'us-east-1' })),
    );
  });

  it('takes the region of an ARN, and refuses a region that contradicts it', () => {
    const arn = 'arn:aws:secretsmanager:eu-central-1:123456789012:secret:prod/ingest-AbCdEf';
    expect(parse({ secretId: arn })).toMatchObject({ ok: true, config: { region: 'eu-central-1' } });
    expect(issues({ secretId: arn, region: 'eu-west-1' })).toEqual([
      { path: 'region', message: 'is eu-west-1, but the secretId ARN is in eu-central-1; remove region or make them agree' },
    ]);
  });

  it('names every problem with its path', () => {
    expect(
      issues({
        secretId: 'has spaces',
        region: 'Europe',
        key: '',
        tags: { 'managed-by': 'me', 'token-rotator:rotation-id': 'x', 'aws:cost': 'y', 'bad#key': 'v' },
        kmsKeyId: '',
        adopt: 'yes',
        typo: 1,
      }).map((i) => i.path),
    ).toEqual(
      expect.arrayContaining([
        'secretId',
        'region',
        'key',
        'tags.managed-by',
        'tags.token-rotator:rotation-id',
        'tags.aws:cost',
        'tags.bad#key',
        'kmsKeyId',
        'adopt',
        'typo',
      ]),
    );
    expect(issues({})).toEqual([{ path: 'secretId', message: 'required' }]);
  });

  it('leaves room for its own tags: at most 44 of the policy’s', () => {
    const tags = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`t${i}`, 'v']));
    expect(issues({ secretId: 's', tags: tags(44) })).toEqual([]);
    expect(issues({ secretId: 's', tags: tags(45) })).toEqual([
      { path: 'tags', message: 'at most 44: a secret holds 50 tags, and token-rotator sets 6 of them' },
    ]);
  });
});

import { randomUUID } from 'node:crypto';

import {
  CreateSecretCommand,
  DeleteSecretCommand,
  DescribeSecretCommand,
  GetSecretValueCommand,
  ListSecretVersionIdsCommand,
  PutSecretValueCommand,
  RestoreSecretCommand,
  SecretsManagerClient,
  TagResourceCommand,
  UntagResourceCommand,
} from '@aws-sdk/client-secrets-manager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { fixedClock } from '../../src/clock.js';
import { type SecretsManagerDouble, startSecretsManagerDouble } from '../doubles/aws-secrets-manager/start-secrets-manager-double.js';

/**
 * The double against the real AWS SDK, with no token-rotator code between them: the wire protocol
 * and the documented rules the sink relies on (idempotent ClientRequestToken, staging labels,
 * signature checks, errors), so that a sink test passing against it means something.
 */
let double: SecretsManagerDouble;
const silent = { trace() {}, debug() {}, info() {}, warn() {}, error() {} };

beforeAll(async () => {
  double = await startSecretsManagerDouble();
});
afterAll(async () => {
  await double.close();
});

function sdk(over: { secretAccessKey?: string; accessKeyId?: string; region?: string; double?: SecretsManagerDouble } = {}) {
  const d = over.double ?? double;
  return new SecretsManagerClient({
    endpoint: d.url,
    region: over.region ?? d.region,
    credentials: {
      accessKeyId: over.accessKeyId ?? d.credentials.accessKeyId,
      secretAccessKey: over.secretAccessKey ?? d.credentials.secretAccessKey,
    },
    logger: silent,
    maxAttempts: 1,
  });
}

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail('the call should have failed'),
    (error: { name: string; message: string; $metadata?: { httpStatusCode?: number } }) => ({
      name: error.name,
      message: error.message,
      status: error.$metadata?.httpStatusCode,
    }),
  );

const name = () => `double/${randomUUID()}`;

describe('the Secrets Manager double, driven by the AWS SDK', () => {
  it('creates a secret whose first version is AWSCURRENT under the ClientRequestToken, and describes its tags and versions', async () => {
    const client = sdk();
    const token = randomUUID();
    const created = await client.send(
      new CreateSecretCommand({ Name: name(), SecretString: 'v1', ClientRequestToken: token, Tags: [{ Key: 'team', Value: 'ingest' }] }),
    );
    expect(created.VersionId).toBe(token);
    expect(created.ARN).toMatch(new RegExp(`^arn:aws:secretsmanager:eu-west-1:123456789012:secret:${created.Name}-[A-Za-z0-9]{6}$`));
    const described = await client.send(new DescribeSecretCommand({ SecretId: created.ARN }));
    expect(described).toMatchObject({
      Name: created.Name,
      Tags: [{ Key: 'team', Value: 'ingest' }],
      VersionIdsToStages: { [token]: ['AWSCURRENT'] },
    });
    expect(described.CreatedDate).toBeInstanceOf(Date);
    // A partial ARN (without the random suffix) finds it too.
    const value = await client.send(new GetSecretValueCommand({ SecretId: created.ARN!.slice(0, -7) }));
    expect(value).toMatchObject({ SecretString: 'v1', VersionId: token, VersionStages: ['AWSCURRENT'] });
    client.destroy();
  });

  it('keeps PutSecretValue idempotent by ClientRequestToken: same value, same version; another value, ResourceExistsException', async () => {
    const client = sdk();
    const secret = name();
    await client.send(new CreateSecretCommand({ Name: secret, SecretString: 'v1' }));
    const token = randomUUID();
    const first = await client.send(new PutSecretValueCommand({ SecretId: secret, SecretString: 'v2', ClientRequestToken: token }));
    const again = await client.send(new PutSecretValueCommand({ SecretId: secret, SecretString: 'v2', ClientRequestToken: token }));
    expect(again.VersionId).toBe(first.VersionId);
    expect(double.versionCount(secret)).toBe(2);
    expect(
      await failure(client.send(new PutSecretValueCommand({ SecretId: secret, SecretString: 'other', ClientRequestToken: token }))),
    ).toMatchObject({
      name: 'ResourceExistsException',
      status: 400,
    });
    expect(double.versionCount(secret)).toBe(2);
    expect(double.valueOf(secret)).toBe('v2');
    client.destroy();
  });

  it('answers a CreateSecret sent again with its token and value as the first time, and refuses another token', async () => {
    const client = sdk();
    const secret = name();
    const token = randomUUID();
    const first = await client.send(new CreateSecretCommand({ Name: secret, SecretString: 'v1', ClientRequestToken: token }));
    const again = await client.send(new CreateSecretCommand({ Name: secret, SecretString: 'v1', ClientRequestToken: token }));
    expect(again).toMatchObject({ ARN: first.ARN, VersionId: token });
    expect(
      await failure(client.send(new CreateSecretCommand({ Name: secret, SecretString: 'v1', ClientRequestToken: randomUUID() }))),
    ).toMatchObject({
      name: 'ResourceExistsException',
      message: `The operation failed because the secret ${secret} already exists.`,
    });
    client.destroy();
  });

  it('moves AWSCURRENT to a new version and AWSPREVIOUS to the one before; older versions are deprecated', async () => {
    const client = sdk();
    const secret = name();
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    await client.send(new CreateSecretCommand({ Name: secret, SecretString: 'v1', ClientRequestToken: ids[0] }));
    await client.send(new PutSecretValueCommand({ SecretId: secret, SecretString: 'v2', ClientRequestToken: ids[1] }));
    await client.send(new PutSecretValueCommand({ SecretId: secret, SecretString: 'v3', ClientRequestToken: ids[2] }));
    const described = await client.send(new DescribeSecretCommand({ SecretId: secret }));
    expect(described.VersionIdsToStages).toEqual({ [ids[1]!]: ['AWSPREVIOUS'], [ids[2]!]: ['AWSCURRENT'] });
    expect((await client.send(new GetSecretValueCommand({ SecretId: secret, VersionStage: 'AWSPREVIOUS' }))).SecretString).toBe('v2');
    const listed = await client.send(new ListSecretVersionIdsCommand({ SecretId: secret }));
    expect(listed.Versions?.map((v) => v.VersionId)).toEqual([ids[1], ids[2]]);
    const all = await client.send(new ListSecretVersionIdsCommand({ SecretId: secret, IncludeDeprecated: true, MaxResults: 2 }));
    expect(all.Versions).toHaveLength(2);
    const rest = await client.send(
      new ListSecretVersionIdsCommand({ SecretId: secret, IncludeDeprecated: true, NextToken: all.NextToken }),
    );
    expect([...all.Versions!, ...rest.Versions!].map((v) => v.VersionId)).toEqual(ids);
    expect(all.Versions?.[0]?.VersionStages, 'a deprecated version has no labels').toBeUndefined();
    client.destroy();
  });

  it('refuses a version past the limit while no deprecated version is a day old, and removes such a one afterwards', async () => {
    const clock = fixedClock(new Date());
    const small = await startSecretsManagerDouble({ maxVersions: 3, clock });
    const client = sdk({ double: small });
    try {
      const secret = name();
      await client.send(new CreateSecretCommand({ Name: secret, SecretString: 'v1' }));
      await client.send(new PutSecretValueCommand({ SecretId: secret, SecretString: 'v2' }));
      await client.send(new PutSecretValueCommand({ SecretId: secret, SecretString: 'v3' }));
      const [oldest] = small.snapshot(secret)!.versions;
      expect(oldest?.stages).toEqual([]);
      expect(await failure(client.send(new PutSecretValueCommand({ SecretId: secret, SecretString: 'v4' })))).toMatchObject({
        name: 'LimitExceededException',
      });
      // A day later the deprecated version may go, and makes room.
      clock.advance(25 * 3600 * 1000);
      await client.send(new PutSecretValueCommand({ SecretId: secret, SecretString: 'v4' }));
      const versions = small.snapshot(secret)!.versions;
      expect(versions.map((v) => v.id)).not.toContain(oldest?.id);
      expect(versions.map((v) => v.stages)).toEqual([[], ['AWSPREVIOUS'], ['AWSCURRENT']]);
    } finally {
      client.destroy();
      await small.close();
    }
  });

  it('tags and untags, and refuses tags AWS reserves', async () => {
    const client = sdk();
    const secret = name();
    await client.send(new CreateSecretCommand({ Name: secret, SecretString: 'v1', Tags: [{ Key: 'a', Value: '1' }] }));
    await client.send(
      new TagResourceCommand({
        SecretId: secret,
        Tags: [
          { Key: 'a', Value: '2' },
          { Key: 'b', Value: 'x y:z' },
        ],
      }),
    );
    await client.send(new UntagResourceCommand({ SecretId: secret, TagKeys: ['b'] }));
    expect(double.snapshot(secret)?.tags).toEqual({ a: '2' });
    expect(await failure(client.send(new TagResourceCommand({ SecretId: secret, Tags: [{ Key: 'aws:x', Value: '1' }] })))).toMatchObject({
      name: 'InvalidParameterException',
    });
    client.destroy();
  });

  it('keeps a deleted secret describable and restorable, and refuses its value until then', async () => {
    const client = sdk();
    const secret = name();
    await client.send(new CreateSecretCommand({ Name: secret, SecretString: 'v1' }));
    const deleted = await client.send(new DeleteSecretCommand({ SecretId: secret, RecoveryWindowInDays: 7 }));
    expect(deleted.DeletionDate).toBeInstanceOf(Date);
    expect((await client.send(new DescribeSecretCommand({ SecretId: secret }))).DeletedDate).toBeInstanceOf(Date);
    for (const call of [
      client.send(new GetSecretValueCommand({ SecretId: secret })),
      client.send(new PutSecretValueCommand({ SecretId: secret, SecretString: 'v2' })),
      client.send(new TagResourceCommand({ SecretId: secret, Tags: [{ Key: 'a', Value: '1' }] })),
      client.send(new CreateSecretCommand({ Name: secret, SecretString: 'v1' })),
    ]) {
      expect(await failure(call)).toMatchObject({ name: 'InvalidRequestException', status: 400 });
    }
    await client.send(new RestoreSecretCommand({ SecretId: secret }));
    expect((await client.send(new GetSecretValueCommand({ SecretId: secret }))).SecretString).toBe('v1');
    client.destroy();
  });

  it('answers ResourceNotFoundException for a missing secret, and for a missing staging label', async () => {
    const client = sdk();
    expect(await failure(client.send(new DescribeSecretCommand({ SecretId: name() })))).toMatchObject({
      name: 'ResourceNotFoundException',
      message: "Secrets Manager can't find the specified secret.",
      status: 400,
    });
    const secret = name();
    await client.send(new CreateSecretCommand({ Name: secret }));
    expect(await failure(client.send(new GetSecretValueCommand({ SecretId: secret })))).toMatchObject({
      name: 'ResourceNotFoundException',
      message: "Secrets Manager can't find the specified secret value for staging label: AWSCURRENT",
    });
    client.destroy();
  });

  it('denies as an IAM policy would, naming the principal, the action and the secret', async () => {
    const client = sdk();
    const secret = name();
    const created = await client.send(new CreateSecretCommand({ Name: secret, SecretString: 'v1' }));
    const undo = double.deny('secretsmanager:PutSecretValue', secret);
    try {
      expect(await failure(client.send(new PutSecretValueCommand({ SecretId: secret, SecretString: 'v2' })))).toEqual({
        name: 'AccessDeniedException',
        status: 400,
        message:
          'User: arn:aws:iam::123456789012:user/token-rotator-test is not authorized to perform: secretsmanager:PutSecretValue ' +
          `on resource: ${created.ARN} because no identity-based policy allows the secretsmanager:PutSecretValue action`,
      });
    } finally {
      undo();
    }
    await client.send(new PutSecretValueCommand({ SecretId: secret, SecretString: 'v2' }));
    // CreateSecret with tags needs TagResource too.
    const undoTags = double.deny('secretsmanager:TagResource');
    try {
      expect(
        await failure(client.send(new CreateSecretCommand({ Name: name(), SecretString: 'v', Tags: [{ Key: 'a', Value: 'b' }] }))),
      ).toMatchObject({
        name: 'AccessDeniedException',
        message: expect.stringContaining('secretsmanager:TagResource'),
      });
    } finally {
      undoTags();
    }
    client.destroy();
  });

  it('verifies the signature: a wrong secret key, an unknown key and another region are refused', async () => {
    const secret = name();
    const good = sdk();
    await good.send(new CreateSecretCommand({ Name: secret, SecretString: 'v1' }));
    good.destroy();
    const cases: [Parameters<typeof sdk>[0], string, RegExp][] = [
      [{ secretAccessKey: 'not-the-key' }, 'InvalidSignatureException', /signature we calculated does not match/],
      [{ accessKeyId: 'AKIAUNKNOWNUNKNOWN00' }, 'UnrecognizedClientException', /security token included in the request is invalid/],
      [{ region: 'us-east-1' }, 'InvalidSignatureException', /scoped to a valid region, not 'us-east-1'/],
    ];
    for (const [over, type, message] of cases) {
      const client = sdk(over);
      expect(await failure(client.send(new GetSecretValueCommand({ SecretId: secret })))).toMatchObject({
        name: type,
        message: expect.stringMatching(message),
      });
      client.destroy();
    }
  });

  it('speaks AWS JSON 1.1 on the wire: an unsigned request gets a JSON error with __type, and nothing secret is recorded', async () => {
    const response = await fetch(double.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'secretsmanager.GetSecretValue' },
      body: JSON.stringify({ SecretId: 'x' }),
    });
    expect(response.status).toBe(403);
    expect(response.headers.get('content-type')).toBe('application/x-amz-json-1.1');
    expect(await response.json()).toEqual({ __type: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' });

    const client = sdk();
    await client.send(new CreateSecretCommand({ Name: name(), SecretString: 'xaat-canary-double-recording' }));
    client.destroy();
    expect(JSON.stringify(double.requests)).not.toContain('xaat-canary-double-recording');
    expect(JSON.stringify(double.requests)).not.toContain(double.credentials.secretAccessKey);
    expect(double.requests.at(-1)).toMatchObject({ action: 'secretsmanager:CreateSecret', hasValue: true, status: 200 });
  });
});

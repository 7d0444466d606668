import { randomUUID } from 'node:crypto';
import { inspect } from 'node:util';

import { PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { SinkError } from '../../src/errors.js';
import { Secret } from '../../src/secret.js';
import {
  type AwsSecretsManagerSinkConfig,
  awsSecretsManagerSinkType,
} from '../../src/sinks/aws-secrets-manager/aws-secrets-manager-sink.js';
import type { SinkClient, TokenMeta } from '../../src/sinks/sink.js';
import { sinkContract } from '../contracts/sink-contract.js';
import { setAwsEnvironment, staticCredentialsEnvironment } from '../doubles/aws-secrets-manager/aws-environment.js';
import { type SecretsManagerDouble, startSecretsManagerDouble } from '../doubles/aws-secrets-manager/start-secrets-manager-double.js';
import { expectNoLeak } from '../helpers/leaks.js';
import { rawLog } from '../helpers/raw-log.js';

let double: SecretsManagerDouble;
let restoreEnvironment: () => void;
let count = 0;

beforeAll(async () => {
  double = await startSecretsManagerDouble({ region: 'eu-west-1' });
  // Credentials, region and endpoint as a pod or a CI job sets them: the SDK's own chain reads them.
  restoreEnvironment = setAwsEnvironment(staticCredentialsEnvironment(double));
});
afterAll(async () => {
  restoreEnvironment();
  await double.close();
});

function configOf(raw: Record<string, unknown>): AwsSecretsManagerSinkConfig {
  const parsed = awsSecretsManagerSinkType.parse({ type: 'aws-secrets-manager', ...raw }, { policyDir: '/', env: {} });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.config;
}

/** The value as someone else would have stored it: the whole string, or `{"token": …}` for a key. */
const foreignValue = (config: AwsSecretsManagerSinkConfig, secret: Secret) =>
  config.key === undefined ? secret.reveal() : JSON.stringify({ [config.key]: secret.reveal() });

for (const key of [undefined, 'token']) {
  sinkContract(
    `aws-secrets-manager (${key === undefined ? 'plain string' : `JSON key ${key}`})`,
    { ownership: 'marker', preflight: true },
    () => ({
      type: awsSecretsManagerSinkType,
      // Credentials come from the AWS SDK's chain (here the environment), never by reference.
      context: { env: { ...process.env }, reference: () => undefined },
      config: () => configOf({ secretId: `contract/${++count}-${randomUUID().slice(0, 8)}`, ...(key ? { key } : {}) }),
      // The tags carry the metadata, whatever the value's shape.
      carriesMetadata: () => true,
      async plantForeign(config, secret) {
        // As the console or Terraform leaves it: no managed-by tag.
        double.plant({ name: config.secretId, value: foreignValue(config, secret), tags: { owner: 'terraform' } });
      },
      async breakDestination(config) {
        // Ours, but deleted: Secrets Manager refuses every read and write until it is restored.
        double.plant({ name: config.secretId, value: 'frozen', tags: { 'managed-by': 'token-rotator' } });
        double.scheduleDeletion(config.secretId);
      },
    }),
  );
}

describe('the aws-secrets-manager sink, beyond the contract', () => {
  const meta = (over: Partial<TokenMeta> = {}): TokenMeta => ({
    name: 'ingest',
    id: 'tok-2',
    expiresAt: new Date('2027-01-01T00:00:00.000Z'),
    rotationId: randomUUID(),
    rotatedAt: new Date('2026-11-22T12:00:00.000Z'),
    ...over,
  });
  const log = rawLog();
  const open = (env: Record<string, string | undefined> = { ...process.env }): Promise<SinkClient<AwsSecretsManagerSinkConfig>> =>
    awsSecretsManagerSinkType.open({ logger: log.logger, env, reference: () => undefined });
  const secretId = (prefix: string) => `${prefix}/${randomUUID().slice(0, 8)}`;
  const requestsSince = (before: number) => double.requests.slice(before).map((r) => r.action.replace('secretsmanager:', ''));
  const rejection = (promise: Promise<unknown>) =>
    promise.then(
      () => expect.fail('should have failed'),
      (error: unknown) => error as SinkError,
    );

  it('creates the secret marked as ours, with the policy tags, the KMS key and the metadata, and the rotation id as its version', async () => {
    const config = configOf({ secretId: secretId('prod/ingest'), tags: { team: 'ingest' }, kmsKeyId: 'alias/token-rotator' });
    const client = await open();
    const m = meta();
    expect(await client.write(config, new Secret('xaat-canary-created'), m, {})).toBe('created');
    const stored = double.snapshot(config.secretId)!;
    expect(stored.tags).toEqual({
      team: 'ingest',
      'managed-by': 'token-rotator',
      'token-rotator:token-name': 'ingest',
      'token-rotator:token-id': 'tok-2',
      'token-rotator:expires-at': '2027-01-01T00:00:00.000Z',
      'token-rotator:rotation-id': m.rotationId,
      'token-rotator:rotated-at': '2026-11-22T12:00:00.000Z',
    });
    expect(stored.kmsKeyId).toBe('alias/token-rotator');
    expect(stored.versions).toEqual([{ id: m.rotationId, stages: ['AWSCURRENT'], created: expect.any(Date) }]);
    expect(double.valueOf(config.secretId)).toBe('xaat-canary-created');
    expect(JSON.stringify(stored)).not.toContain('xaat-canary-created');
    await client.close();
  });

  it('writes nothing when the secret of this rotation is there already: a describe and a read, no write', async () => {
    const config = configOf({ secretId: secretId('quiet') });
    const client = await open();
    const m = meta();
    await client.write(config, new Secret('same-secret'), m, {});
    const before = double.requests.length;
    expect(await client.write(config, new Secret('same-secret'), { ...m }, {})).toBe('unchanged');
    expect(requestsSince(before)).toEqual(['DescribeSecret', 'GetSecretValue']);
    await client.close();
  });

  it('adds no second version when PutSecretValue is retried after its answer was lost, nor when the write is run again', async () => {
    const config = configOf({ secretId: secretId('retried') });
    const client = await open();
    await client.write(config, new Secret('first-secret'), meta(), {});
    const m = meta({ id: 'tok-3' });
    // Applied, then every answer lost: the SDK tries three times, with the same ClientRequestToken.
    double.failNext('PutSecretValue', { type: 'ServiceUnavailable', status: 503 }, { times: 3, afterApplying: true });
    const error = await rejection(client.write(config, new Secret('second-secret'), m, {}));
    expect(error).toBeInstanceOf(SinkError);
    expect(error.message).toContain('ServiceUnavailable');
    const puts = double.requests.filter((r) => r.action === 'secretsmanager:PutSecretValue' && r.secretId?.includes(config.secretId));
    expect(puts.map((r) => r.clientRequestToken)).toEqual([m.rotationId, m.rotationId, m.rotationId]);
    expect(double.versionCount(config.secretId)).toBe(2);

    // The run after the crash: the value is there under this rotation's version; only the tags are written.
    const before = double.requests.length;
    expect(await client.write(config, new Secret('second-secret'), m, {})).toBe('updated');
    expect(requestsSince(before)).toEqual(['DescribeSecret', 'GetSecretValue', 'TagResource']);
    expect(double.versionCount(config.secretId)).toBe(2);
    expect(double.snapshot(config.secretId)?.tags['token-rotator:token-id']).toBe('tok-3');
    expect(await client.write(config, new Secret('second-secret'), m, {})).toBe('unchanged');
    await client.close();
  });

  it('creates one secret with one version when the CreateSecret answer is lost and the SDK sends it again', async () => {
    const config = configOf({ secretId: secretId('create-retried') });
    const client = await open();
    const m = meta();
    double.failNext('CreateSecret', { type: 'InternalServiceError', status: 500 }, { afterApplying: true });
    expect(await client.write(config, new Secret('created-once'), m, {})).toBe('created');
    const creates = double.requests.filter((r) => r.action === 'secretsmanager:CreateSecret' && r.secretId === config.secretId);
    expect(creates.map((r) => [r.status, r.clientRequestToken])).toEqual([
      [500, m.rotationId],
      [200, m.rotationId],
    ]);
    expect(double.snapshot(config.secretId)?.versions.map((v) => v.id)).toEqual([m.rotationId]);
    await client.close();
  });

  it('writes a value replaced behind its back again as a new version of the same rotation, and the tags then describe it', async () => {
    const config = configOf({ secretId: secretId('drift') });
    const client = await open();
    const m = meta();
    await client.write(config, new Secret('rotated-secret'), m, {});
    // Someone puts another value by hand: the tags no longer describe AWSCURRENT.
    const sdk = new SecretsManagerClient({ logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {} } });
    await sdk.send(new PutSecretValueCommand({ SecretId: config.secretId, SecretString: 'by-hand' }));
    sdk.destroy();
    const drifted = await client.read(config, {});
    expect(drifted?.secret?.reveal()).toBe('by-hand');
    expect(drifted?.meta, 'tags of another version must not be reported as this one').toEqual({});

    expect(await client.write(config, new Secret('rotated-secret'), m, {})).toBe('updated');
    const versions = double.snapshot(config.secretId)!.versions;
    expect(versions).toHaveLength(3);
    expect(versions.at(-1)?.stages).toEqual(['AWSCURRENT']);
    expect(versions.at(-1)?.id).not.toBe(m.rotationId);
    const healed = await client.read(config, {});
    expect(healed?.secret?.reveal()).toBe('rotated-secret');
    expect(healed?.meta).toMatchObject({ rotationId: m.rotationId, id: 'tok-2' });
    await client.close();
  });

  it("keeps a JSON secret's other fields exactly, numbers as written, and reads the key back", async () => {
    const config = configOf({ secretId: secretId('json'), key: 'token', adopt: true });
    double.plant({ name: config.secretId, value: '{"user":"ingest","port":12345678901234567890,"ratio":1.0,"token":"old"}' });
    const client = await open();
    expect(await client.write(config, new Secret('json-secret'), meta(), {})).toBe('updated');
    expect(double.valueOf(config.secretId)).toBe('{"user":"ingest","port":12345678901234567890,"ratio":1.0,"token":"json-secret"}');
    expect(double.valueOf(config.secretId, 'AWSPREVIOUS')).toContain('"token":"old"');
    expect((await client.read(config, {}))?.secret?.reveal()).toBe('json-secret');
    await client.close();
  });

  it('refuses to set a key in a value that is not a JSON object unless adopt, and says what to do', async () => {
    const name = secretId('plain');
    double.plant({ name, value: 'a-plain-string', tags: { 'managed-by': 'token-rotator' } });
    const client = await open();
    const error = await rejection(client.write(configOf({ secretId: name, key: 'token' }), new Secret('s-key'), meta(), {}));
    expect(error.message).toMatch(/aws-secrets-manager .*\[token\].*not a JSON object.*remove key.*adopt: true/);
    expect(error.message).not.toContain('a-plain-string');
    await expect(client.preflight!(configOf({ secretId: name, key: 'token' }), {})).rejects.toThrow(/not a JSON object/);
    expect(await client.write(configOf({ secretId: name, key: 'token', adopt: true }), new Secret('s-key'), meta(), {})).toBe('updated');
    expect(double.valueOf(name)).toBe('{"token":"s-key"}');
    await client.close();
  });

  it('refuses a secret another tool manages, naming its managed-by tag, and reads it as unowned without its metadata', async () => {
    const name = secretId('foreign');
    double.plant({ name, value: 'theirs', tags: { 'managed-by': 'terraform', 'token-rotator:token-id': 'fake' } });
    const client = await open();
    const config = configOf({ secretId: name });
    const error = await rejection(client.write(config, new Secret('mine'), meta(), {}));
    expect(error.message).toBe(
      `refusing to write ${awsSecretsManagerSinkType.describe(config)}: it exists and is not managed by token-rotator (managed-by: terraform); set adopt: true on the sink to take it over`,
    );
    const content = await client.read(config, {});
    expect(content?.unowned).toMatch(/managed-by: terraform.*adopt: true/);
    expect(content?.meta).toEqual({});
    expect(double.versionCount(name)).toBe(1);
    await client.close();
  });

  it('round-trips metadata, a token id a tag cannot hold as it is included, and a token that never expires', async () => {
    const config = configOf({ secretId: secretId('meta') });
    const client = await open();
    const m = meta({ id: 'tok#42!', expiresAt: null, rotationId: 'ingest@2026-11-22T12:00:00.000Z' });
    await client.write(config, new Secret('meta-secret'), m, {});
    expect(double.snapshot(config.secretId)?.tags['token-rotator:token-id']).toMatch(/^b64:/);
    // Not a valid ClientRequestToken itself: its version id is derived from it.
    expect(double.snapshot(config.secretId)?.versions[0]?.id).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect((await client.read(config, {}))?.meta).toEqual({
      name: 'ingest',
      id: 'tok#42!',
      expiresAt: null,
      rotationId: 'ingest@2026-11-22T12:00:00.000Z',
      rotatedAt: '2026-11-22T12:00:00.000Z',
    });
    expect(await client.write(config, new Secret('meta-secret'), m, {})).toBe('unchanged');
    await client.close();
  });

  it('names the action AWS denied and the secret, without the secret value', async () => {
    const config = configOf({ secretId: secretId('denied') });
    const client = await open();
    await client.write(config, new Secret('xaat-canary-denied-1'), meta(), {});
    const arn = double.snapshot(config.secretId)!.arn;
    const undo = double.deny('secretsmanager:PutSecretValue', arn);
    try {
      const error = await rejection(client.write(config, new Secret('xaat-canary-denied-2'), meta(), {}));
      expect(error.message).toContain(
        `cannot write ${awsSecretsManagerSinkType.describe(config)}: AWS denied secretsmanager:PutSecretValue on ${arn}`,
      );
      expect(error.message).toContain('allow secretsmanager:PutSecretValue on that secret');
      const shown = { message: error.message, inspect: inspect(error, { depth: Infinity }), stack: String(error.stack) };
      expectNoLeak(shown, ['xaat-canary-denied-1', 'xaat-canary-denied-2', double.credentials.secretAccessKey]);
      expect(Object.keys(error.cause as object)).not.toContain('$response');
      expect(inspect(error.cause)).not.toContain('$metadata');
    } finally {
      undo();
    }
    // CreateSecret with tags needs TagResource: AWS names it, and so does the error.
    const undoTags = double.deny('secretsmanager:TagResource');
    try {
      const fresh = configOf({ secretId: secretId('denied-tags') });
      const error = await rejection(client.write(fresh, new Secret('xaat-canary-denied-3'), meta(), {}));
      expect(error.message).toContain('AWS denied secretsmanager:TagResource');
    } finally {
      undoTags();
    }
    await client.close();
  });

  it('says which KMS permission is missing when Secrets Manager cannot use the key', async () => {
    const config = configOf({ secretId: secretId('kms'), kmsKeyId: 'alias/locked' });
    double.denyKms('alias/locked');
    const client = await open();
    const error = await rejection(client.write(config, new Secret('kms-secret'), meta(), {}));
    expect(error.message).toMatch(
      /could not use the KMS key alias\/locked for secretsmanager:CreateSecret .*EncryptionFailure.*kms:GenerateDataKey/,
    );
    await client.close();
  });

  it('tells to restore a secret scheduled for deletion, on read, write and preflight', async () => {
    const name = secretId('deleted');
    const arn = double.plant({ name, value: 'v', tags: { 'managed-by': 'token-rotator' } });
    double.scheduleDeletion(name);
    const client = await open();
    const config = configOf({ secretId: name });
    const calls = [
      () => client.read(config, {}),
      () => client.write(config, new Secret('s-del'), meta(), {}),
      () => client.preflight!(config, {}),
    ];
    for (const call of calls) {
      const error = await rejection(call());
      expect(error.message).toContain(`scheduled for deletion`);
      expect(error.message).toContain(`aws secretsmanager restore-secret --secret-id ${arn}`);
    }
    await client.close();
  });

  describe('preflight', () => {
    it('passes for a secret of ours and for a missing one, which it says will be created, changing nothing', async () => {
      const client = await open();
      const missing = configOf({ secretId: secretId('preflight-missing') });
      const lines = log.lines.length;
      const before = double.requests.length;
      await expect(client.preflight!(missing, {})).resolves.toBeUndefined();
      expect(requestsSince(before)).toEqual(['DescribeSecret']);
      expect(log.lines.slice(lines).join('')).toMatch(/does not exist yet.*secretsmanager:CreateSecret and secretsmanager:TagResource/);
      expect(double.snapshot(missing.secretId)).toBeUndefined();

      const ours = configOf({ secretId: secretId('preflight-ours'), key: 'token' });
      await client.write(ours, new Secret('pre-secret'), meta(), {});
      const versions = double.versionCount(ours.secretId);
      const at = double.requests.length;
      await expect(client.preflight!(ours, {})).resolves.toBeUndefined();
      expect(requestsSince(at)).toEqual(['DescribeSecret', 'GetSecretValue']);
      expect(double.versionCount(ours.secretId)).toBe(versions);
      await client.close();
    });

    it('names the missing permission when DescribeSecret or GetSecretValue is denied', async () => {
      const client = await open();
      const config = configOf({ secretId: secretId('preflight-denied') });
      const undo = double.deny('secretsmanager:DescribeSecret');
      try {
        await expect(client.preflight!(config, {})).rejects.toThrow(
          new RegExp(`AWS denied secretsmanager:DescribeSecret on ${config.secretId} .*allow secretsmanager:DescribeSecret`),
        );
      } finally {
        undo();
      }
      await client.write(config, new Secret('pre-denied'), meta(), {});
      const undoGet = double.deny('secretsmanager:GetSecretValue');
      try {
        await expect(client.preflight!(config, {})).rejects.toThrow(
          /AWS denied secretsmanager:GetSecretValue on arn:aws:secretsmanager:eu-west-1:/,
        );
      } finally {
        undoGet();
      }
      await client.close();
    });

    it('refuses a foreign secret without adopt, and a missing secret named by ARN, which cannot be created', async () => {
      const client = await open();
      const name = secretId('preflight-foreign');
      double.plant({ name, value: 'x' });
      await expect(client.preflight!(configOf({ secretId: name }), {})).rejects.toThrow(
        /not managed by token-rotator \(no managed-by tag\); set adopt: true/,
      );
      await expect(client.preflight!(configOf({ secretId: name, adopt: true }), {})).resolves.toBeUndefined();
      const arn = `arn:aws:secretsmanager:eu-west-1:123456789012:secret:nowhere-AbCdEf`;
      await expect(client.preflight!(configOf({ secretId: arn }), {})).rejects.toThrow(
        /no such secret, and a secret named by its ARN cannot be created/,
      );
      await expect(client.write(configOf({ secretId: arn }), new Secret('by-arn'), meta(), {})).rejects.toThrow(
        /named by its ARN cannot be created/,
      );
      await client.close();
    });
  });

  it('writes through an ARN as secretId, and names the region it takes from it', async () => {
    const name = secretId('by-arn');
    const arn = double.plant({ name, value: 'x', tags: { 'managed-by': 'token-rotator' } });
    const config = configOf({ secretId: arn });
    expect(config.region).toBe('eu-west-1');
    const client = await open();
    expect(await client.write(config, new Secret('arn-secret'), meta(), {})).toBe('updated');
    expect(double.valueOf(name)).toBe('arn-secret');
    await client.close();
  });

  it('never logs, whatever happens: the SDK is silent, and no canary or credential reaches a line', async () => {
    const quiet = rawLog();
    const client = await awsSecretsManagerSinkType.open({ logger: quiet.logger, env: { ...process.env }, reference: () => undefined });
    const config = configOf({ secretId: secretId('silent') });
    await client.write(config, new Secret('xaat-canary-silent'), meta(), {});
    await client.read(config, {});
    double.failNext('*', { type: 'ThrottlingException', status: 400, message: 'Rate exceeded' }, { times: 3 });
    await client.write(config, new Secret('xaat-canary-silent-2'), meta(), {}).catch(() => undefined);
    await client.close();
    expect(quiet.lines).toEqual([]);
    expectNoLeak({ log: log.lines.join('') }, ['xaat-canary', double.credentials.secretAccessKey]);
  });
});

import { randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { Secret } from '../../src/secret.js';
import {
  type AwsSecretsManagerSinkConfig,
  awsSecretsManagerSinkType,
} from '../../src/sinks/aws-secrets-manager/aws-secrets-manager-sink.js';
import type { TokenMeta } from '../../src/sinks/sink.js';
import { setAwsEnvironment, staticCredentialsEnvironment } from '../doubles/aws-secrets-manager/aws-environment.js';
import { type SecretsManagerDouble, startSecretsManagerDouble } from '../doubles/aws-secrets-manager/start-secrets-manager-double.js';
import { expectNoLeak } from '../helpers/leaks.js';
import { rawLog } from '../helpers/raw-log.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/**
 * Credentials, region and endpoint come from the AWS SDK's own chains, as on EKS (IRSA, Pod
 * Identity), in CI (environment) or on a laptop (profile): each is set up here as the platform
 * sets it, and the double checks that every request is signed with what that source handed out.
 */
let double: SecretsManagerDouble;
let dir: string;
let restore: (() => void) | undefined;

beforeAll(async () => {
  double = await startSecretsManagerDouble({ region: 'eu-west-1' });
  dir = await makeTempDir();
});
afterEach(() => {
  restore?.();
  restore = undefined;
});
afterAll(async () => {
  await double.close();
  await rm(dir, { recursive: true, force: true });
});

const meta = (): TokenMeta => ({
  name: 'ingest',
  id: 'tok-1',
  expiresAt: null,
  rotationId: randomUUID(),
  rotatedAt: new Date('2026-11-22T12:00:00.000Z'),
});

function configOf(raw: Record<string, unknown> = {}): AwsSecretsManagerSinkConfig {
  const parsed = awsSecretsManagerSinkType.parse(
    { type: 'aws-secrets-manager', secretId: `credentials/${randomUUID().slice(0, 8)}`, ...raw },
    { policyDir: '/' },
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.config;
}

/** Writes a secret with a client opened on the current environment; answers the log and the access key that signed. */
async function writeOnce(config = configOf(), env: Record<string, string | undefined> = { ...process.env }) {
  const log = rawLog();
  const client = await awsSecretsManagerSinkType.open({ logger: log.logger, env, reference: () => undefined });
  try {
    const before = double.requests.length;
    const result = await client.write(config, new Secret('xaat-canary-credentials'), meta(), {});
    const signedBy = double.requests.slice(before).find((r) => r.action.startsWith('secretsmanager:'))?.accessKeyId;
    return { result, log, signedBy, requests: double.requests.slice(before) };
  } finally {
    await client.close();
  }
}

async function failureOf(config = configOf()) {
  const client = await awsSecretsManagerSinkType.open({
    logger: rawLog().logger,
    env: { ...process.env },
    reference: () => undefined,
  });
  try {
    return await client.write(config, new Secret('xaat-canary-failing'), meta(), {}).then(
      () => expect.fail('the write should have failed'),
      (error: Error) => error,
    );
  } finally {
    await client.close();
  }
}

describe('aws-secrets-manager credentials from the SDK chain', () => {
  it('uses AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, and AWS_ENDPOINT_URL_SECRETS_MANAGER before AWS_ENDPOINT_URL', async () => {
    restore = setAwsEnvironment({ ...staticCredentialsEnvironment(double), AWS_ENDPOINT_URL: 'http://127.0.0.1:9' });
    const { result, signedBy } = await writeOnce();
    expect(result).toBe('created');
    expect(signedBy).toBe(double.credentials.accessKeyId);
  });

  it('uses AWS_ENDPOINT_URL when no endpoint is set for Secrets Manager alone', async () => {
    const { AWS_ENDPOINT_URL_SECRETS_MANAGER: _, ...rest } = staticCredentialsEnvironment(double);
    restore = setAwsEnvironment({ ...rest, AWS_ENDPOINT_URL: double.url });
    expect((await writeOnce()).result).toBe('created');
  });

  it('takes IRSA credentials: the projected service account token exchanged at STS for a role session', async () => {
    const tokenFile = join(dir, 'eks-token');
    const token = `eyJhbGciOiJSUzI1NiJ9.${randomUUID()}.irsa`;
    await writeFile(tokenFile, token);
    const roleArn = 'arn:aws:iam::123456789012:role/token-rotator';
    double.allowWebIdentity(roleArn, token);
    restore = setAwsEnvironment({
      AWS_REGION: double.region,
      AWS_ROLE_ARN: roleArn,
      AWS_WEB_IDENTITY_TOKEN_FILE: tokenFile,
      // STS and Secrets Manager both at the double, as a VPC endpoint setup would point both.
      AWS_ENDPOINT_URL: double.url,
    });
    const { result, signedBy, requests, log } = await writeOnce();
    expect(result).toBe('created');
    expect(requests[0]).toMatchObject({ action: 'sts:AssumeRoleWithWebIdentity', status: 200 });
    expect(signedBy).toMatch(/^ASIA/);
    expectNoLeak({ log: log.lines.join('') }, [token, 'xaat-canary-credentials']);
  });

  it('takes EKS Pod Identity credentials from the agent, with the pod token as authorization', async () => {
    const tokenFile = join(dir, 'pod-identity-token');
    const token = `eyJhbGciOiJFUzM4NCJ9.${randomUUID()}.pod`;
    await writeFile(tokenFile, token);
    double.allowPodIdentity(token, 'arn:aws:iam::123456789012:role/token-rotator');
    restore = setAwsEnvironment({
      AWS_REGION: double.region,
      AWS_ENDPOINT_URL_SECRETS_MANAGER: double.url,
      AWS_CONTAINER_CREDENTIALS_FULL_URI: `${double.url}/v1/credentials`,
      AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: tokenFile,
    });
    const { result, signedBy, requests } = await writeOnce();
    expect(result).toBe('created');
    expect(requests[0]).toMatchObject({ action: 'eks-auth:AssumeRoleForPodIdentity', status: 200 });
    expect(signedBy).toMatch(/^ASIA/);
  });

  it('takes a named profile from the shared config and credentials files', async () => {
    const credentials = join(dir, 'credentials');
    const config = join(dir, 'config');
    await writeFile(
      credentials,
      `[rotator]\naws_access_key_id = ${double.credentials.accessKeyId}\naws_secret_access_key = ${double.credentials.secretAccessKey}\n`,
    );
    await writeFile(config, `[profile rotator]\nregion = ${double.region}\nendpoint_url = ${double.url}\n`);
    restore = setAwsEnvironment({ AWS_PROFILE: 'rotator', AWS_CONFIG_FILE: config, AWS_SHARED_CREDENTIALS_FILE: credentials });
    const { result, signedBy } = await writeOnce();
    expect(result).toBe('created');
    expect(signedBy).toBe(double.credentials.accessKeyId);
  });

  it('says where it looked when no source has credentials', async () => {
    restore = setAwsEnvironment({ AWS_REGION: double.region, AWS_ENDPOINT_URL_SECRETS_MANAGER: double.url });
    const error = await failureOf();
    expect(error.message).toMatch(
      /no AWS credentials were found .*AWS_ACCESS_KEY_ID.*IRSA \(AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE\).*EKS Pod Identity/,
    );
  });

  it('says credentials were refused, without the secret key, when AWS does not accept them', async () => {
    restore = setAwsEnvironment({
      ...staticCredentialsEnvironment(double),
      AWS_SECRET_ACCESS_KEY: 'wrong-secret-key-of-forty-characters-xx',
    });
    const error = await failureOf();
    expect(error.message).toMatch(
      /AWS refused the credentials for secretsmanager:DescribeSecret \(InvalidSignatureException \(HTTP 400, request [0-9a-f-]+\)/,
    );
    expect(String(error.stack) + String((error.cause as Error).stack)).not.toContain('wrong-secret-key');
  });

  it('asks for a region when neither the sink nor the chain gives one, and uses the sink region over AWS_REGION', async () => {
    const { AWS_REGION: _, ...rest } = staticCredentialsEnvironment(double);
    restore = setAwsEnvironment(rest);
    expect((await failureOf()).message).toMatch(/no AWS region; set region on the sink, or AWS_REGION/);
    expect((await writeOnce(configOf({ region: 'eu-west-1' }))).result).toBe('created');
    restore();
    restore = setAwsEnvironment({ ...staticCredentialsEnvironment(double), AWS_REGION: 'us-east-1' });
    expect((await writeOnce(configOf({ region: 'eu-west-1' }))).result).toBe('created');
  });

  it('refuses to send a secret over plain http to anything but loopback', async () => {
    restore = setAwsEnvironment({
      ...staticCredentialsEnvironment(double),
      AWS_ENDPOINT_URL_SECRETS_MANAGER: 'http://secretsmanager.example.invalid',
    });
    const before = double.requests.length;
    const error = await failureOf();
    expect(error.message).toMatch(
      /refusing to send a secret over plain http to secretsmanager\.example\.invalid: use an https:\/\/ endpoint/,
    );
    expect(double.requests.length).toBe(before);
  });

  it('warns, by name only, about AWS variables from a dotenv file, which the SDK never sees', async () => {
    restore = setAwsEnvironment(staticCredentialsEnvironment(double));
    const { log, result } = await writeOnce(configOf(), { ...process.env, AWS_ROLE_ARN: 'arn:aws:iam::123456789012:role/from-dotenv' });
    expect(result).toBe('created');
    const warning = log.lines.find((line) => line.includes('not the dotenv file'));
    expect(warning).toContain('"variables":["AWS_ROLE_ARN"]');
    expect(warning).not.toContain('from-dotenv');
  });
});

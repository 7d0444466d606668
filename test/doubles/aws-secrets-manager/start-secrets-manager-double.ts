import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { type Clock, systemClock } from '../../../src/clock.js';
import { AwsError } from './aws-error.js';
import { CURRENT, SecretStore, type StoredSecret } from './secret-store.js';
import { type KnownCredentials, verifySignature } from './sigv4.js';

export interface SecretsManagerDoubleOptions {
  /** The one region this endpoint serves: requests signed for another are refused. Default eu-west-1. */
  region?: string;
  account?: string;
  clock?: Clock;
  /** The version limit of a secret (Secrets Manager's is 100). */
  maxVersions?: number;
}

/**
 * One request as the double saw it, for asserting what a client did. Never a secret value and
 * never a credential: only the action, the ids and tokens, the status and the error's type.
 */
export interface RecordedAwsRequest {
  /** `secretsmanager:PutSecretValue`, `sts:AssumeRoleWithWebIdentity`, `eks-auth:AssumeRoleForPodIdentity`. */
  action: string;
  secretId?: string;
  clientRequestToken?: string;
  versionStage?: string;
  tagKeys?: string[];
  /** Whether the request carried a SecretString or SecretBinary (never what). */
  hasValue?: boolean;
  /** The access key that signed it; the key id is no secret, the secret key never travels. */
  accessKeyId?: string;
  status: number;
  error?: string;
}

/** A secret as a test sees it: everything but its values. */
export interface SecretSnapshot {
  name: string;
  arn: string;
  description?: string;
  kmsKeyId?: string;
  tags: Record<string, string>;
  deleted: boolean;
  /** Every version, deprecated ones too, in the order they were made. */
  versions: { id: string; stages: string[]; created: Date }[];
}

export interface SecretsManagerDouble {
  /** The endpoint: AWS_ENDPOINT_URL_SECRETS_MANAGER (and AWS_ENDPOINT_URL for STS). Plain http on loopback. */
  url: string;
  region: string;
  account: string;
  /** Long-term credentials the double accepts, as AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY would give them. */
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** Every request, in order. */
  requests: RecordedAwsRequest[];
  /** Puts a secret there as another tool would (a console, Terraform): no tags of token-rotator. Answers its ARN. */
  plant(secret: { name: string; value?: string; binary?: Buffer; tags?: Record<string, string>; kmsKeyId?: string }): string;
  snapshot(secretId: string): SecretSnapshot | undefined;
  /** The value under a staging label (AWSCURRENT by default) or of a version id; undefined when none. */
  valueOf(secretId: string, stageOrVersion?: string): string | undefined;
  /** How many versions the secret holds, deprecated ones included (ListSecretVersionIds with IncludeDeprecated). */
  versionCount(secretId: string): number;
  /** Denies an action (`secretsmanager:PutSecretValue`, or `*`) on a secret (name, ARN, or `*`), as an IAM policy would. Answers the undo. */
  deny(action: string, resource?: string): () => void;
  /** Makes Secrets Manager unable to use a KMS key: EncryptionFailure on write, DecryptionFailure on read. */
  denyKms(kmsKeyId: string): void;
  /** DeleteSecret with a recovery window: described still, restorable, nothing else. */
  scheduleDeletion(secretId: string): void;
  /**
   * The next `times` calls of `action` (`PutSecretValue`, or `*`) fail with this error: before
   * anything is done, or with `afterApplying` once the call has been applied (an answer lost on the
   * way back: a timeout, a reset, a 5xx from a proxy).
   */
  failNext(
    action: string,
    error: { type: string; status: number; message?: string },
    options?: { times?: number; afterApplying?: boolean },
  ): void;
  /** Drops every failure `failNext` still has to give: the service is back. */
  clearFailures(): void;
  /** Lets a web identity token assume a role through STS AssumeRoleWithWebIdentity (IRSA). */
  allowWebIdentity(roleArn: string, token: string): void;
  /**
   * Serves EKS Pod Identity credentials at `${url}/v1/credentials` to the holder of `token`
   * (AWS_CONTAINER_CREDENTIALS_FULL_URI and AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE).
   */
  allowPodIdentity(token: string, roleArn: string): void;
  close(): Promise<void>;
}

const MAX_BODY = 1024 * 1024;
const JSON_CONTENT = 'application/x-amz-json-1.1';
const SESSION_MS = 60 * 60 * 1000;

const ACTIONS = {
  CreateSecret: 'createSecret',
  DescribeSecret: 'describeSecret',
  GetSecretValue: 'getSecretValue',
  PutSecretValue: 'putSecretValue',
  TagResource: 'tagResource',
  UntagResource: 'untagResource',
  DeleteSecret: 'deleteSecret',
  RestoreSecret: 'restoreSecret',
  ListSecretVersionIds: 'listSecretVersionIds',
} as const satisfies Record<string, keyof SecretStore>;

const randomKey = (prefix: string) => prefix + [...randomBytes(16)].map((b) => 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'[b % 32]).join('');

/**
 * AWS Secrets Manager on a loopback port, as the AWS SDK for JavaScript v3 talks to it: the AWS
 * JSON 1.1 protocol (POST /, `X-Amz-Target: secretsmanager.<Action>`, `application/x-amz-json-1.1`,
 * errors as `{"__type", "message"}` with their HTTP status), every request's Signature Version 4
 * verified with the secret key, and the calls token-rotator makes with their documented rules
 * (see SecretStore). Beside it, as the SDK's credential chain reaches them: STS
 * AssumeRoleWithWebIdentity (the query protocol, for IRSA) and an EKS Pod Identity agent.
 */
export async function startSecretsManagerDouble(options: SecretsManagerDoubleOptions = {}): Promise<SecretsManagerDouble> {
  const region = options.region ?? 'eu-west-1';
  const account = options.account ?? '123456789012';
  const clock = options.clock ?? systemClock;
  const store = new SecretStore(region, account, clock, options.maxVersions);
  const credentials = { accessKeyId: randomKey('AKIA'), secretAccessKey: randomBytes(30).toString('base64') };
  const known = new Map<string, KnownCredentials>([
    [credentials.accessKeyId, { ...credentials, principal: `arn:aws:iam::${account}:user/token-rotator-test` }],
  ]);
  const webIdentities = new Map<string, string>();
  const podIdentities = new Map<string, string>();
  const faults: { action: string; error: AwsError; times: number; afterApplying: boolean }[] = [];
  const requests: RecordedAwsRequest[] = [];

  /** Temporary credentials for a role, as STS and the Pod Identity agent hand them out. */
  function session(roleArn: string, sessionName: string) {
    const issued = {
      accessKeyId: randomKey('ASIA'),
      secretAccessKey: randomBytes(30).toString('base64'),
      sessionToken: randomBytes(48).toString('base64'),
      expiration: new Date(clock.now().getTime() + SESSION_MS),
    };
    const roleName = roleArn.split('/').at(-1) ?? 'role';
    known.set(issued.accessKeyId, { ...issued, principal: `arn:aws:sts::${account}:assumed-role/${roleName}/${sessionName}` });
    return issued;
  }

  function secretsManager(request: IncomingMessage, body: Buffer, response: ServerResponse, record: RecordedAwsRequest): void {
    const target = String(request.headers['x-amz-target']);
    const action = target.slice('secretsmanager.'.length);
    record.action = `secretsmanager:${action}`;
    const requestId = randomUUID();
    const answer = (status: number, payload: unknown, type?: string) => {
      record.status = status;
      if (type) record.error = type;
      response.writeHead(status, {
        'content-type': JSON_CONTENT,
        'x-amzn-requestid': requestId,
        ...(type ? { 'x-amzn-errortype': type } : {}),
      });
      response.end(typeof payload === 'string' ? payload : JSON.stringify(payload));
    };
    try {
      if (request.method !== 'POST' || (request.url ?? '/').split('?')[0] !== '/')
        throw new AwsError('UnknownOperationException', 'Unknown operation');
      const contentType = String(request.headers['content-type'] ?? '')
        .split(';')[0]!
        .trim();
      if (contentType !== JSON_CONTENT) throw new AwsError('SerializationException', `Unsupported content type ${contentType || '(none)'}`);
      const signer = verifySignature(
        { method: request.method, url: request.url ?? '/', headers: request.headers, body },
        // The SDK signs with the machine's clock, whatever clock the double keeps its data by.
        { region, service: 'secretsmanager', now: new Date(), lookup: (id) => known.get(id) },
      );
      record.accessKeyId = signer.accessKeyId;
      if (!Object.hasOwn(ACTIONS, action)) throw new AwsError('UnknownOperationException', `Unknown operation ${action}`);
      let input: Record<string, unknown>;
      try {
        input = body.length === 0 ? {} : (JSON.parse(body.toString('utf8')) as Record<string, unknown>);
      } catch {
        throw new AwsError('SerializationException', 'Start of structure or map found where not expected.');
      }
      if (input === null || typeof input !== 'object' || Array.isArray(input))
        throw new AwsError('SerializationException', 'Expected an object');
      recordInput(record, input);
      const fault = faults.find((f) => f.times > 0 && (f.action === '*' || f.action === action));
      if (fault) fault.times--;
      if (fault && !fault.afterApplying) throw fault.error;
      const method = ACTIONS[action as keyof typeof ACTIONS];
      const output = store[method](input, signer.principal);
      if (fault) throw fault.error;
      answer(200, output);
    } catch (error) {
      if (!(error instanceof AwsError)) {
        answer(500, new AwsError('InternalServiceError', 'An error occurred on the server side.', 500).body(), 'InternalServiceError');
        return;
      }
      answer(error.status, error.body(), error.type);
    }
  }

  /** STS AssumeRoleWithWebIdentity, in the query protocol the SDK's STS client speaks (form in, XML out). */
  function sts(body: Buffer, response: ServerResponse, record: RecordedAwsRequest): void {
    const form = new URLSearchParams(body.toString('utf8'));
    const action = form.get('Action') ?? '';
    record.action = `sts:${action}`;
    const requestId = randomUUID();
    const fail = (status: number, code: string, message: string) => {
      record.status = status;
      record.error = code;
      response.writeHead(status, { 'content-type': 'text/xml', 'x-amzn-requestid': requestId });
      response.end(
        `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>${code}</Code>` +
          `<Message>${message}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`,
      );
    };
    if (action !== 'AssumeRoleWithWebIdentity')
      return fail(400, 'InvalidAction', `Could not find operation ${xml(action)} for version 2011-06-15`);
    const roleArn = form.get('RoleArn') ?? '';
    const token = form.get('WebIdentityToken') ?? '';
    const sessionName = form.get('RoleSessionName') ?? 'session';
    if (webIdentities.get(roleArn) !== token)
      return fail(400, 'InvalidIdentityToken', "Couldn't retrieve verification key from your identity provider");
    const issued = session(roleArn, sessionName);
    record.status = 200;
    response.writeHead(200, { 'content-type': 'text/xml', 'x-amzn-requestid': requestId });
    response.end(
      `<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleWithWebIdentityResult>` +
        `<Credentials><AccessKeyId>${issued.accessKeyId}</AccessKeyId><SecretAccessKey>${xml(issued.secretAccessKey)}</SecretAccessKey>` +
        `<SessionToken>${xml(issued.sessionToken)}</SessionToken><Expiration>${issued.expiration.toISOString()}</Expiration></Credentials>` +
        `<AssumedRoleUser><Arn>${xml(known.get(issued.accessKeyId)!.principal)}</Arn><AssumedRoleId>AROA${randomKey('')}:${xml(sessionName)}</AssumedRoleId></AssumedRoleUser>` +
        `<SubjectFromWebIdentityToken>system:serviceaccount:token-rotator:token-rotator</SubjectFromWebIdentityToken><Audience>sts.amazonaws.com</Audience>` +
        `</AssumeRoleWithWebIdentityResult><ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata></AssumeRoleWithWebIdentityResponse>`,
    );
  }

  /** The EKS Pod Identity agent: a GET with the projected token as Authorization, JSON credentials back. */
  function podIdentity(request: IncomingMessage, response: ServerResponse, record: RecordedAwsRequest): void {
    record.action = 'eks-auth:AssumeRoleForPodIdentity';
    const roleArn = podIdentities.get(String(request.headers.authorization ?? ''));
    if (!roleArn) {
      record.status = 401;
      record.error = 'AccessDeniedException';
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ Code: 'AccessDeniedException', Message: 'the pod identity token is not valid' }));
      return;
    }
    const issued = session(roleArn, `eks-token-rotator-${randomUUID().slice(0, 8)}`);
    record.status = 200;
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        AccessKeyId: issued.accessKeyId,
        SecretAccessKey: issued.secretAccessKey,
        Token: issued.sessionToken,
        AccountId: account,
        Expiration: issued.expiration.toISOString(),
      }),
    );
  }

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
    });
    request.on('end', () => {
      const record: RecordedAwsRequest = { action: '', status: 0 };
      requests.push(record);
      if (size > MAX_BODY) {
        record.status = 413;
        response.writeHead(413).end();
        return;
      }
      const body = Buffer.concat(chunks);
      const contentType = String(request.headers['content-type'] ?? '');
      if (request.headers['x-amz-target'] !== undefined && String(request.headers['x-amz-target']).startsWith('secretsmanager.')) {
        secretsManager(request, body, response, record);
      } else if (request.method === 'POST' && contentType.startsWith('application/x-www-form-urlencoded')) {
        sts(body, response, record);
      } else if (request.method === 'GET' && (request.url ?? '').split('?')[0] === '/v1/credentials') {
        podIdentity(request, response, record);
      } else {
        record.action = `${request.method} ${request.url}`;
        record.status = 404;
        response.writeHead(404, { 'content-type': JSON_CONTENT });
        response.end(new AwsError('UnknownOperationException', 'Unknown operation').body());
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  const find = (secretId: string): StoredSecret | undefined => store.find(secretId);

  return {
    url: `http://127.0.0.1:${port}`,
    region,
    account,
    credentials,
    requests,
    plant({ name, value, binary, tags, kmsKeyId }) {
      const now = clock.now();
      const secret: StoredSecret = {
        name,
        arn: store.arnFor(name),
        ...(kmsKeyId ? { kmsKeyId } : {}),
        tags: new Map(Object.entries(tags ?? {})),
        versions: new Map(),
        created: now,
        lastChanged: now,
      };
      if (value !== undefined) store.addVersion(secret, randomUUID(), { text: value }, undefined);
      else if (binary !== undefined) store.addVersion(secret, randomUUID(), { binary }, undefined);
      store.secrets.set(name, secret);
      return secret.arn;
    },
    snapshot(secretId) {
      const secret = find(secretId);
      if (!secret) return undefined;
      return {
        name: secret.name,
        arn: secret.arn,
        ...(secret.description !== undefined ? { description: secret.description } : {}),
        ...(secret.kmsKeyId ? { kmsKeyId: secret.kmsKeyId } : {}),
        tags: Object.fromEntries(secret.tags),
        deleted: secret.deleted !== undefined,
        versions: [...secret.versions.values()].map((v) => ({ id: v.id, stages: [...v.stages], created: new Date(v.created) })),
      };
    },
    valueOf(secretId, stageOrVersion = CURRENT) {
      const secret = find(secretId);
      const version =
        secret?.versions.get(stageOrVersion) ?? [...(secret?.versions.values() ?? [])].find((v) => v.stages.includes(stageOrVersion));
      return version?.text;
    },
    versionCount: (secretId) => find(secretId)?.versions.size ?? 0,
    deny(action, resource = '*') {
      const rule = { action, resource };
      store.denies.push(rule);
      return () => {
        const at = store.denies.indexOf(rule);
        if (at >= 0) store.denies.splice(at, 1);
      };
    },
    denyKms: (kmsKeyId) => void store.deniedKmsKeys.add(kmsKeyId),
    scheduleDeletion(secretId) {
      const secret = find(secretId);
      if (!secret) throw new Error(`no secret ${secretId}`);
      secret.deleted = clock.now();
    },
    failNext(action, error, { times = 1, afterApplying = false } = {}) {
      faults.push({ action, error: new AwsError(error.type, error.message ?? error.type, error.status), times, afterApplying });
    },
    clearFailures: () => void faults.splice(0),
    allowWebIdentity: (roleArn, token) => void webIdentities.set(roleArn, token),
    allowPodIdentity: (token, roleArn) => void podIdentities.set(token, roleArn),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function recordInput(record: RecordedAwsRequest, input: Record<string, unknown>): void {
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  const secretId = text(input.SecretId) ?? text(input.Name);
  if (secretId) record.secretId = secretId;
  const token = text(input.ClientRequestToken);
  if (token) record.clientRequestToken = token;
  const stage = text(input.VersionStage);
  if (stage) record.versionStage = stage;
  if (Array.isArray(input.Tags)) record.tagKeys = input.Tags.map((t: { Key?: unknown }) => String(t?.Key));
  if (Array.isArray(input.TagKeys)) record.tagKeys = input.TagKeys.map(String);
  if (input.SecretString !== undefined || input.SecretBinary !== undefined) record.hasValue = true;
}

const xml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

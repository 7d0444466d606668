import { randomUUID } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { formatWithOptions, inspect } from 'node:util';

import { SecretManagerServiceClient } from '@google-cloud/secret-manager';
import { GoogleAuth, JWT } from 'google-auth-library';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

import { SinkError } from '../../src/errors.js';
import { Secret } from '../../src/secret.js';
import { type GcpSecretManagerSinkConfig, gcpSecretManagerSinkType } from '../../src/sinks/gcp-secret-manager/gcp-secret-manager-sink.js';
import type { SinkClient, TokenMeta } from '../../src/sinks/sink.js';
import { sinkContract } from '../contracts/sink-contract.js';
import {
  README_ROLE,
  RpcError,
  type SecretManagerDouble,
  type ServiceAccountKeyFile,
  startSecretManagerDouble,
  status,
} from '../doubles/gcp-secret-manager/start-secret-manager-double.js';
import { silentLogger } from '../fakes/fake-deps.js';
import { expectNoLeak } from '../helpers/leaks.js';
import { rawLog } from '../helpers/raw-log.js';
import { makeTempDir } from '../helpers/temp-dir.js';

// grpc-js learns the roots it trusts when it loads: the double's certificate goes in before any import loads it.
const untrust = await vi.hoisted(async () => (await import('../doubles/gcp-secret-manager/trust.js')).trustDoubleCertificate());

const PROJECT = 'token-rotator-test';
const PROJECT_NUMBER = '424242424242';

let d: SecretManagerDouble;
let dir: string;
let rotator: { path: string; key: ServiceAccountKeyFile; member: string };
/** Another tool, as `gcloud secrets create` would act: the real client with an admin's key. */
let admin: SecretManagerServiceClient;
let count = 0;
const opened: SinkClient<GcpSecretManagerSinkConfig>[] = [];

/** A service account key file (0600, as it should be kept), granted `grants` on the project. */
async function account(name: string, grants: readonly string[] = README_ROLE) {
  const key = d.serviceAccount(name, grants);
  const path = join(dir, `${name}.json`);
  await writeFile(path, JSON.stringify(key), { mode: 0o600 });
  return { path, key, member: `serviceAccount:${key.client_email}` };
}

beforeAll(async () => {
  dir = await makeTempDir();
  d = await startSecretManagerDouble({
    projects: [
      { id: PROJECT, number: PROJECT_NUMBER },
      { id: 'no-crm-project', number: '515151515151', resourceManagerEnabled: false },
      { id: 'disabled-api-project', number: '626262626262', secretManagerEnabled: false },
    ],
  });
  rotator = await account('token-rotator');
  const adminKey = d.serviceAccount('platform-admin', ['roles/secretmanager.admin']);
  const [host, port] = d.endpoint.split(':');
  const authClient = new JWT({ email: adminKey.client_email, key: adminKey.private_key, keyId: adminKey.private_key_id });
  admin = new SecretManagerServiceClient({ auth: new GoogleAuth({ authClient }), apiEndpoint: host!, port: Number(port) });
});

afterAll(async () => {
  await Promise.allSettled(opened.map((client) => client.close()));
  await admin?.close();
  await d?.close();
  await rm(dir, { recursive: true, force: true });
  untrust();
});

function configOf(raw: Record<string, unknown> = {}): GcpSecretManagerSinkConfig {
  const parsed = gcpSecretManagerSinkType.parse(
    { type: 'gcp-secret-manager', project: PROJECT, secret: `s-${++count}`, endpoint: d.endpoint, ...raw },
    { policyDir: dir, env: {} },
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.config;
}

const nameOf = (config: GcpSecretManagerSinkConfig) => `projects/${config.project}/secrets/${config.secret}`;

/** As `gcloud secrets create` and `gcloud secrets versions add` leave it. */
async function plant(config: GcpSecretManagerSinkConfig, value: string | undefined, labels: Record<string, string> = {}, annotations = {}) {
  await admin.createSecret({
    parent: `projects/${config.project}`,
    secretId: config.secret,
    secret: { replication: { automatic: {} }, labels, annotations },
  });
  if (value !== undefined) await admin.addSecretVersion({ parent: nameOf(config), payload: { data: Buffer.from(value) } });
}

sinkContract('gcp-secret-manager', { ownership: 'marker', preflight: true }, () => ({
  type: gcpSecretManagerSinkType,
  // Application Default Credentials: a service account key that the run's environment names.
  context: { env: { GOOGLE_APPLICATION_CREDENTIALS: rotator.path }, reference: () => undefined },
  config: () => configOf({ secret: `contract-${randomUUID()}` }),
  carriesMetadata: () => true,
  plantForeign: (config, secret) => plant(config, secret.reveal(), { owner: 'platform-team' }),
  async breakDestination(config) {
    // Ours, but the rotator may not add versions to it: an IAM deny rule, as an organisation might set.
    await plant(config, undefined, { 'managed-by': 'token-rotator' });
    d.deny(rotator.member, { project: config.project, secret: config.secret }, 'secretmanager.versions.add');
  },
}));

const meta = (over: Partial<TokenMeta> = {}): TokenMeta => ({
  name: 'ingest',
  id: 'tok-2',
  expiresAt: new Date('2027-01-01T00:00:00.000Z'),
  rotationId: 'rot-1',
  rotatedAt: new Date('2026-11-22T12:00:00.000Z'),
  ...over,
});

async function open(env: Record<string, string | undefined> = { GOOGLE_APPLICATION_CREDENTIALS: rotator.path }, logger = silentLogger()) {
  const client = await gcpSecretManagerSinkType.open({ logger, env, reference: () => undefined });
  opened.push(client);
  return client;
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    (value) => expect.fail(`expected a failure, got ${inspect(value)}`),
    (error: unknown) => error as Error,
  );
}

/** The calls the double served since `from`, as `Method` or `Method:code`. */
const callsSince = (from: number) => d.requests.slice(from).map((r) => (r.code === 0 ? r.method : `${r.method}:${r.code}`));

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('the gcp-secret-manager sink, beyond the contract', () => {
  it('creates the secret marked as ours, the secret only in its version, the token metadata in annotations', async () => {
    const config = configOf({ labels: { team: 'ingest' } });
    const client = await open();
    const from = d.requests.length;
    expect(await client.write(config, new Secret('s3cret-canary-create'), meta(), {})).toBe('created');
    expect(callsSince(from)).toEqual(['GetSecret:5', 'CreateSecret', 'AddSecretVersion', 'UpdateSecret']);
    // Sent by Google's own client over gRPC, authenticated as the service account by a signed JWT.
    for (const call of d.requests.slice(from)) {
      expect(call.apiClient).toMatch(/gapic\/[\d.]+ .*grpc\/[\d.]+/);
      expect(call).toMatchObject({ member: rotator.member, via: 'self-signed-jwt' });
    }
    const stored = d.secret(PROJECT, config.secret)!;
    expect(stored.labels).toEqual({ team: 'ingest', 'managed-by': 'token-rotator' });
    expect(stored.replication).toEqual({ automatic: {} });
    expect(stored.annotations).toEqual({
      'token-rotator.token-name': 'ingest',
      'token-rotator.token-id': 'tok-2',
      'token-rotator.expires-at': '2027-01-01T00:00:00.000Z',
      'token-rotator.rotation-id': 'rot-1',
      'token-rotator.rotated-at': '2026-11-22T12:00:00.000Z',
      'token-rotator.version': '1',
    });
    expect(stored.versions.map((v) => [v.number, v.state, v.data?.toString(), v.clientSpecifiedPayloadChecksum])).toEqual([
      [1, 'ENABLED', 's3cret-canary-create', true],
    ]);
    expect(JSON.stringify({ labels: stored.labels, annotations: stored.annotations })).not.toContain('s3cret-canary-create');
    expect(JSON.stringify(d.requests)).not.toContain('s3cret-canary-create');
  });

  it('replicates to the locations given, and refuses a secret that replicates elsewhere, since replication cannot change', async () => {
    const client = await open();
    const placed = configOf({ locations: ['europe-west1', 'europe-west4'] });
    expect(await client.write(placed, new Secret('placed'), meta(), {})).toBe('created');
    expect(d.secret(PROJECT, placed.secret)!.replication).toEqual({
      userManaged: { replicas: [{ location: 'europe-west1' }, { location: 'europe-west4' }] },
    });
    expect(await client.write(placed, new Secret('placed'), meta(), {})).toBe('unchanged');

    const automatic = configOf({ locations: ['europe-west1'] });
    await plant(automatic, undefined, { 'managed-by': 'token-rotator' });
    const message = `refusing to write gcp-secret-manager ${nameOf(automatic)}: it replicates automatically, and the sink says locations europe-west1`;
    expect((await failure(client.write(automatic, new Secret('x'), meta(), {}))).message).toContain(message);
    expect((await failure(client.preflight!(automatic, {}))).message).toContain(message);
    expect(d.versionCount(PROJECT, automatic.secret)).toBe(0);
  });

  it('adds no second version when a write is retried after a crash between the version and its annotations', async () => {
    const config = configOf();
    const client = await open();
    d.intercept('UpdateSecret', () => {
      throw new RpcError(status.UNAVAILABLE, 'The service is currently unavailable.');
    });
    const crashed = await failure(client.write(config, new Secret('rotated-once'), meta(), {}));
    expect(crashed).toBeInstanceOf(SinkError);
    expect(crashed.message).toMatch(/cannot update the labels and annotations of gcp-secret-manager .*cannot reach Secret Manager/);
    expect(d.versionCount(PROJECT, config.secret)).toBe(1);
    // Until the annotations name version 1, nothing vouches for metadata about it.
    expect((await client.read(config, {}))?.meta).toEqual({});

    const from = d.requests.length;
    expect(await client.write(config, new Secret('rotated-once'), meta(), {})).toBe('updated');
    expect(callsSince(from)).toEqual(['GetSecret', 'AccessSecretVersion', 'UpdateSecret']);
    expect(d.versionCount(PROJECT, config.secret)).toBe(1);
    expect(d.secret(PROJECT, config.secret)!.annotations).toMatchObject({
      'token-rotator.rotation-id': 'rot-1',
      'token-rotator.version': '1',
    });

    const again = d.requests.length;
    expect(await client.write(config, new Secret('rotated-once'), meta(), {})).toBe('unchanged');
    expect(callsSince(again)).toEqual(['GetSecret', 'AccessSecretVersion']);
  });

  it('adds the version on retry when the crash came between creating the secret and adding it', async () => {
    const config = configOf();
    const client = await open();
    d.intercept('AddSecretVersion', () => {
      throw new RpcError(status.UNAVAILABLE, 'The service is currently unavailable.');
    });
    await failure(client.write(config, new Secret('second-try'), meta(), {}));
    expect(d.secret(PROJECT, config.secret)?.labels).toEqual({ 'managed-by': 'token-rotator' });
    expect(await client.read(config, {}), 'an empty secret of ours holds nothing yet').toBeUndefined();
    expect(await client.write(config, new Secret('second-try'), meta(), {})).toBe('updated');
    expect(d.versionCount(PROJECT, config.secret)).toBe(1);
    expect(d.latestText(PROJECT, config.secret)).toBe('second-try');
  });

  it("refuses another tool's secret, naming it and adopt; reads it as unowned; adopting keeps its other labels and annotations", async () => {
    const config = configOf();
    await plant(config, 'hand-made-value', { owner: 'platform-team' }, { 'example.com.note': 'made by hand' });
    const client = await open();
    const content = await client.read(config, {});
    expect(content?.secret?.reveal()).toBe('hand-made-value');
    expect(content?.unowned).toBe(
      'exists and is not managed by token-rotator (no managed-by label); set adopt: true on the sink to take it over',
    );

    const from = d.requests.length;
    const refused = await failure(client.write(config, new Secret('ours'), meta(), {}));
    expect(refused.message).toBe(
      `refusing to write gcp-secret-manager ${nameOf(config)}: it exists and is not managed by token-rotator (no managed-by label); set adopt: true on the sink to take it over`,
    );
    expect(callsSince(from)).toEqual(['GetSecret']);

    expect(await client.write({ ...config, adopt: true }, new Secret('ours'), meta(), {})).toBe('updated');
    const stored = d.secret(PROJECT, config.secret)!;
    expect(stored.labels).toEqual({ owner: 'platform-team', 'managed-by': 'token-rotator' });
    expect(stored.annotations).toMatchObject({
      'example.com.note': 'made by hand',
      'token-rotator.token-id': 'tok-2',
      'token-rotator.version': '2',
    });
    expect(d.versionCount(PROJECT, config.secret)).toBe(2);

    const terraform = configOf();
    await plant(terraform, 'tf', { 'managed-by': 'terraform' });
    expect((await failure(client.write(terraform, new Secret('ours'), meta(), {}))).message).toContain(
      'not managed by token-rotator (label managed-by: terraform)',
    );
  });

  it('reads back the metadata of the latest version only: a version added behind its back reads without it, and a write heals it', async () => {
    const config = configOf();
    const client = await open();
    await client.write(config, new Secret('from-rotation'), meta(), {});
    expect(await client.read(config, {})).toMatchObject({
      meta: { id: 'tok-2', expiresAt: '2027-01-01T00:00:00.000Z', rotationId: 'rot-1', rotatedAt: '2026-11-22T12:00:00.000Z' },
    });

    await admin.addSecretVersion({ parent: nameOf(config), payload: { data: Buffer.from('edited-by-hand') } });
    const drifted = await client.read(config, {});
    expect(drifted?.secret?.reveal()).toBe('edited-by-hand');
    expect(drifted?.meta, 'the annotations describe version 1, not version 2').toEqual({});
    expect(drifted?.unowned).toBeUndefined();

    expect(await client.write(config, new Secret('from-rotation'), meta(), {})).toBe('updated');
    expect(d.versionCount(PROJECT, config.secret)).toBe(3);
    expect((await client.read(config, {}))?.meta).toMatchObject({ id: 'tok-2', rotationId: 'rot-1' });
  });

  it('treats a disabled or destroyed latest version as drift: no secret on read, and a write adds an enabled one', async () => {
    const config = configOf();
    const client = await open();
    await client.write(config, new Secret('kept-value'), meta(), {});
    await admin.disableSecretVersion({ name: `${nameOf(config)}/versions/1` });
    // `latest` is the newest version whatever its state: readers of the secret get an error now.
    await expect(admin.accessSecretVersion({ name: `${nameOf(config)}/versions/latest` })).rejects.toMatchObject({
      code: status.FAILED_PRECONDITION,
    });
    expect(await client.read(config, {})).toEqual({ secret: undefined, meta: {} });
    expect(await client.write(config, new Secret('kept-value'), meta(), {})).toBe('updated');
    expect(d.secret(PROJECT, config.secret)!.versions.map((v) => v.state)).toEqual(['DISABLED', 'ENABLED']);
    expect((await client.read(config, {}))?.secret?.reveal()).toBe('kept-value');

    await admin.destroySecretVersion({ name: `${nameOf(config)}/versions/2` });
    expect((await client.read(config, {}))?.secret).toBeUndefined();
    expect(await client.write(config, new Secret('kept-value'), meta(), {})).toBe('updated');
    expect(d.versionCount(PROJECT, config.secret)).toBe(3);
  });

  it('starts over from a fresh read when another writer changed the secret before its annotations were written (etag)', async () => {
    const config = configOf();
    const client = await open();
    await client.write(config, new Secret('first'), meta(), {});
    d.intercept('UpdateSecret', () => {
      const stored = d.secret(PROJECT, config.secret)!;
      stored.labels = { ...stored.labels, other: 'writer' };
      stored.etag = '"changed-by-another-writer"';
    });
    const from = d.requests.length;
    expect(await client.write(config, new Secret('second'), meta({ id: 'tok-3', rotationId: 'rot-2' }), {})).toBe('updated');
    expect(callsSince(from)).toEqual([
      'GetSecret',
      'AccessSecretVersion',
      'AddSecretVersion',
      'UpdateSecret:9',
      'GetSecret',
      'AccessSecretVersion',
      'UpdateSecret',
    ]);
    const stored = d.secret(PROJECT, config.secret)!;
    expect(d.versionCount(PROJECT, config.secret)).toBe(2);
    expect(stored.labels).toEqual({ 'managed-by': 'token-rotator', other: 'writer' });
    expect(stored.annotations).toMatchObject({ 'token-rotator.rotation-id': 'rot-2', 'token-rotator.version': '2' });
  });

  it('refuses data whose CRC32C does not match the checksum Secret Manager returns with it', async () => {
    const config = configOf();
    const client = await open();
    await client.write(config, new Secret('checked'), meta(), {});
    d.secret(PROJECT, config.secret)!.versions[0]!.crc32c ^= 1;
    expect((await failure(client.read(config, {}))).message).toBe(
      `cannot read gcp-secret-manager ${nameOf(config)}: the latest version's data does not match its CRC32C checksum (corrupted in transit); try again`,
    );
  });

  it('gives up a call in flight when its signal aborts, with an AbortError', async () => {
    const config = configOf();
    const client = await open();
    const controller = new AbortController();
    d.intercept('GetSecret', () => controller.abort());
    const error = await failure(client.write(config, new Secret('never'), meta(), { signal: controller.signal }));
    expect(error.name).toBe('AbortError');
    expect(d.secret(PROJECT, config.secret)).toBeUndefined();
  });
});

describe('the gcp-secret-manager sink and IAM', () => {
  it("needs every permission of the README's custom role, and names the one that is missing, where, and for whom", async () => {
    for (const permission of README_ROLE) {
      const lacking = await account(`lacks-${permission.replace(/\./g, '-').slice(14)}`);
      d.deny(lacking.member, { project: PROJECT }, permission);
      const client = await open({ GOOGLE_APPLICATION_CREDENTIALS: lacking.path });
      const config = configOf();
      const error = await failure(
        (async () => {
          await client.write(config, new Secret('needs-all'), meta(), {});
          await client.read(config, {});
        })(),
      );
      const on = permission === 'secretmanager.secrets.create' ? `projects/${PROJECT}` : nameOf(config);
      expect(error).toBeInstanceOf(SinkError);
      expect(error.message, permission).toContain(`gcp-secret-manager ${nameOf(config)}: permission ${permission} denied on ${on}`);
      expect(error.message, permission).toContain(`grant ${permission} to ${lacking.key.client_email} on ${on}`);
      expectNoLeak({ message: error.message, inspect: inspect(error, { depth: Infinity }) }, [
        'needs-all',
        lacking.key.private_key.slice(40, 120),
      ]);
    }
    // And with all of it, the same sequence works.
    const client = await open();
    const config = configOf();
    await client.write(config, new Secret('needs-all'), meta(), {});
    expect((await client.read(config, {}))?.secret?.reveal()).toBe('needs-all');
    await expect(client.preflight!(config, {})).resolves.toBeUndefined();
  });

  it('is not enough with the predefined version roles alone: secretVersionAdder and secretAccessor cannot update the annotations', async () => {
    const narrow = await account('predefined-only', [
      'roles/secretmanager.secretVersionAdder',
      'roles/secretmanager.secretAccessor',
      'roles/secretmanager.viewer',
    ]);
    const config = configOf();
    await plant(config, undefined, { 'managed-by': 'token-rotator' });
    const client = await open({ GOOGLE_APPLICATION_CREDENTIALS: narrow.path });
    expect((await failure(client.preflight!(config, {}))).message).toBe(
      `cannot write gcp-secret-manager ${nameOf(config)}: writing it needs secretmanager.secrets.update on ${nameOf(config)}, ` +
        `which ${narrow.key.client_email} lacks; grant them, for instance with the custom role in docs/sinks/gcp-secret-manager.md`,
    );
  });

  it('names, for a refusal, the service account of the credentials that made the call, on each endpoint', async () => {
    // One key file path, as a mounted Secret is: an operator switches it to another service account
    // while the daemon runs. A sink on an endpoint not used before loads the new key; its refusal is the new account's.
    const first = await account('switched-first');
    const second = await account('switched-second');
    for (const one of [first, second]) d.deny(one.member, { project: PROJECT }, 'secretmanager.secrets.get');
    const keyFile = join(dir, 'mounted-key.json');
    await writeFile(keyFile, JSON.stringify(first.key), { mode: 0o600 });
    const client = await open({ GOOGLE_APPLICATION_CREDENTIALS: keyFile });
    const byName = configOf();
    expect((await failure(client.read(byName, {}))).message).toContain(`grant secretmanager.secrets.get to ${first.key.client_email}`);

    await writeFile(keyFile, JSON.stringify(second.key), { mode: 0o600 });
    // The same double, reached by its address: another endpoint, so another gRPC client with its own credentials.
    const byAddress = configOf({ endpoint: d.endpoint.replace(/^localhost:/, '127.0.0.1:') });
    const from = d.requests.length;
    const refused = await failure(client.read(byAddress, {}));
    expect(d.requests.slice(from).map((r) => r.member)).toEqual([second.member]);
    expect(refused.message).toContain(`grant secretmanager.secrets.get to ${second.key.client_email}`);
    expect(refused.message).not.toContain(first.key.client_email);
  });
});

describe('the gcp-secret-manager sink preflight', () => {
  it('passes for a secret of ours and for a missing one it may create, and changes nothing', async () => {
    const client = await open();
    const existing = configOf();
    await client.write(existing, new Secret('there'), meta(), {});
    const missing = configOf();
    const from = d.requests.length;
    await expect(client.preflight!(existing, {})).resolves.toBeUndefined();
    await expect(client.preflight!(missing, {})).resolves.toBeUndefined();
    expect(callsSince(from)).toEqual(['GetSecret', 'TestIamPermissions', 'GetSecret:5', 'TestIamPermissions']);
    expect(d.requests.slice(from).map((r) => r.service)).toEqual([
      'SecretManagerService',
      'SecretManagerService',
      'SecretManagerService',
      'Projects',
    ]);
    expect(d.secret(PROJECT, missing.secret)).toBeUndefined();
    expect(d.versionCount(PROJECT, existing.secret)).toBe(1);
  });

  it('fails, saying what to grant, when the secret is missing and may not be created', async () => {
    const noCreate = await account(
      'no-create',
      README_ROLE.filter((p) => p !== 'secretmanager.secrets.create'),
    );
    const client = await open({ GOOGLE_APPLICATION_CREDENTIALS: noCreate.path });
    const config = configOf();
    expect((await failure(client.preflight!(config, {}))).message).toBe(
      `cannot write gcp-secret-manager ${nameOf(config)}: the secret does not exist yet, and creating and writing it needs ` +
        `secretmanager.secrets.create on projects/${PROJECT}, which ${noCreate.key.client_email} lacks; grant them, for instance with the custom role in docs/sinks/gcp-secret-manager.md`,
    );
  });

  it("fails for another tool's secret, and for the secret's own missing permissions", async () => {
    const client = await open();
    const foreign = configOf();
    await plant(foreign, 'theirs', {});
    expect((await failure(client.preflight!(foreign, {}))).message).toContain('set adopt: true on the sink to take it over');
    await expect(client.preflight!({ ...foreign, adopt: true }, {})).resolves.toBeUndefined();

    const locked = configOf();
    await plant(locked, undefined, { 'managed-by': 'token-rotator' });
    d.deny(rotator.member, { project: PROJECT, secret: locked.secret }, ['secretmanager.versions.add', 'secretmanager.secrets.update']);
    expect((await failure(client.preflight!(locked, {}))).message).toContain(
      `writing it needs secretmanager.versions.add, secretmanager.secrets.update on ${nameOf(locked)}, which ${rotator.key.client_email} lacks`,
    );
  });

  it('says how to enable the API when Secret Manager is disabled in the project', async () => {
    d.grant(rotator.member, { project: 'disabled-api-project' }, README_ROLE);
    const client = await open();
    const config = configOf({ project: 'disabled-api-project' });
    expect((await failure(client.preflight!(config, {}))).message).toBe(
      `cannot read gcp-secret-manager ${nameOf(config)}: the Secret Manager API is not enabled in project 626262626262: ` +
        'enable it with `gcloud services enable secretmanager.googleapis.com --project 626262626262`',
    );
  });

  it('warns and passes when Cloud Resource Manager cannot say whether a missing secret may be created', async () => {
    d.grant(rotator.member, { project: 'no-crm-project' }, README_ROLE);
    const log = rawLog();
    const client = await open(undefined, log.logger);
    await expect(client.preflight!(configOf({ project: 'no-crm-project' }), {})).resolves.toBeUndefined();
    const warning = log.lines.map((line) => JSON.parse(line) as { level: number; msg: string; reason: string }).find((l) => l.level === 40);
    expect(warning?.msg).toContain('could not say whether secretmanager.secrets.create is granted on projects/no-crm-project');
    expect(warning?.reason).toContain('Cloud Resource Manager API has not been used in project 515151515151');
  });
});

describe("the gcp-secret-manager sink's credentials: Google's Application Default Credentials", () => {
  it('uses the key file GOOGLE_APPLICATION_CREDENTIALS names in the process environment', async () => {
    vi.stubEnv('GOOGLE_APPLICATION_CREDENTIALS', rotator.path);
    const client = await open({ ...process.env });
    const from = d.requests.length;
    expect(await client.write(configOf(), new Secret('from-process-env'), meta(), {})).toBe('created');
    expect(d.requests.slice(from).every((r) => r.member === rotator.member && r.via === 'self-signed-jwt')).toBe(true);
  });

  it("uses the metadata server's token for the pod's Google service account (Workload Identity)", async () => {
    const workload = 'ingest-writer@token-rotator-test.iam.gserviceaccount.com';
    d.workloadIdentity(workload);
    d.grant(`serviceAccount:${workload}`, { project: PROJECT }, README_ROLE);
    const home = join(dir, 'empty-home');
    await mkdir(home, { recursive: true });
    vi.stubEnv('GOOGLE_APPLICATION_CREDENTIALS', undefined);
    vi.stubEnv('HOME', home);
    vi.stubEnv('CLOUDSDK_CONFIG', home);
    vi.stubEnv('GOOGLE_CLOUD_PROJECT', PROJECT);
    vi.stubEnv('GCE_METADATA_HOST', d.metadataHost);
    try {
      const client = await open({});
      const from = d.requests.length;
      const config = configOf();
      expect(await client.write(config, new Secret('from-workload-identity'), meta(), {})).toBe('created');
      expect(d.requests.slice(from).every((r) => r.member === `serviceAccount:${workload}` && r.via === 'access-token')).toBe(true);
      expect(d.issued.metadataServer).toBeGreaterThan(0);
      expect(d.httpRequests.map((r) => `${r.path} ${r.status}`)).toContain(
        '/computeMetadata/v1/instance/service-accounts/default/token 200',
      );
      await expect(client.preflight!(configOf(), {})).resolves.toBeUndefined();
    } finally {
      d.workloadIdentity(undefined);
    }
  });

  it('says where credentials come from when there are none', async () => {
    vi.stubEnv('GOOGLE_APPLICATION_CREDENTIALS', undefined);
    vi.stubEnv('HOME', join(dir, 'nowhere'));
    vi.stubEnv('CLOUDSDK_CONFIG', join(dir, 'nowhere'));
    vi.stubEnv('METADATA_SERVER_DETECTION', 'none');
    const client = await open({});
    const config = configOf();
    expect((await failure(client.write(config, new Secret('no-credentials'), meta(), {}))).message).toBe(
      `cannot read gcp-secret-manager ${nameOf(config)}: no Google credentials found: set GOOGLE_APPLICATION_CREDENTIALS to a service account key file, ` +
        'run `gcloud auth application-default login`, or run on GKE or Compute Engine with a service account (Workload Identity)',
    );
  });

  it('reports credentials Secret Manager refuses (a deleted key), and an unreadable key file, without their content', async () => {
    const deleted = await account('deleted-key');
    d.deleteKey(deleted.key.private_key_id);
    const client = await open({ GOOGLE_APPLICATION_CREDENTIALS: deleted.path });
    const config = configOf();
    const refused = await failure(client.write(config, new Secret('refused'), meta(), {}));
    expect(refused.message).toMatch(
      /Secret Manager refused the credentials \(Request had invalid authentication credentials\..*\): check the service account key/,
    );

    const garbled = join(dir, 'garbled.json');
    await writeFile(garbled, `{"type":"service_account","private_key":"${deleted.key.private_key.slice(0, 200)}`, { mode: 0o600 });
    const broken = await open({ GOOGLE_APPLICATION_CREDENTIALS: garbled });
    const error = await failure(broken.write(config, new Secret('refused'), meta(), {}));
    expect(error.message).toBe(
      `cannot read gcp-secret-manager ${nameOf(config)}: cannot load the Google credentials: the credentials file is not valid JSON`,
    );
    expectNoLeak({ message: error.message, inspect: inspect(error, { depth: Infinity }) }, [deleted.key.private_key.slice(40, 120)]);

    const nowhere = await open({ GOOGLE_APPLICATION_CREDENTIALS: join(dir, 'no-such-key.json') });
    expect((await failure(nowhere.read(config, {}))).message).toBe(
      `cannot read gcp-secret-manager ${nameOf(config)}: cannot read the Google credentials file GOOGLE_APPLICATION_CREDENTIALS names (ENOENT): check the path and its permissions`,
    );
  });
});

describe('the gcp-secret-manager sink keeps secrets out of sight', () => {
  it("prints nothing of a secret, even with the Google SDK's debug logging asked for", async () => {
    vi.stubEnv('GOOGLE_SDK_NODE_LOGGING', '*');
    const printed: string[] = [];
    const keep = (chunk: unknown) => {
      printed.push(String(chunk));
      return true;
    };
    // google-logging-utils prints with console.error; anything else would reach the streams.
    const spies = [
      vi.spyOn(process.stderr, 'write').mockImplementation(keep),
      vi.spyOn(process.stdout, 'write').mockImplementation(keep),
      ...(['error', 'warn', 'log', 'info', 'debug'] as const).map((method) =>
        vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void keep(formatWithOptions({}, ...args))),
      ),
    ];
    const log = rawLog();
    try {
      const client = await open(undefined, log.logger);
      const config = configOf();
      await client.write(config, new Secret('xaat-canary-sdk-logging'), meta(), {});
      await client.read(config, {});
      await client.close();
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    const canary = Buffer.from('xaat-canary-sdk-logging');
    // As text, as base64, and as the byte list JSON makes of a Buffer (what the SDK's `%j` would print).
    expectNoLeak({ printed: printed.join(''), log: log.lines.join(''), requests: JSON.stringify(d.requests) }, [
      canary.toString(),
      canary.toString('base64'),
      [...canary].join(','),
    ]);
  });
});

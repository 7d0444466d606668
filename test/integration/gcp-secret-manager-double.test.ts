import { generateKeyPairSync } from 'node:crypto';

import { SecretManagerServiceClient } from '@google-cloud/secret-manager';
import { GoogleAuth, JWT } from 'google-auth-library';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

import { type SecretManagerDouble, startSecretManagerDouble, status } from '../doubles/gcp-secret-manager/start-secret-manager-double.js';

// grpc-js learns the roots it trusts when it loads: the double's certificate goes in before any import loads it.
const untrust = await vi.hoisted(async () => (await import('../doubles/gcp-secret-manager/trust.js')).trustDoubleCertificate());

/*
 * The double's rules, checked through Google's own client: what the sink's tests rely on it to
 * enforce as Secret Manager does.
 */

const PROJECT = 'double-project';
const NUMBER = '737373737373';
let d: SecretManagerDouble;
let admin: SecretManagerServiceClient;
let viewer: SecretManagerServiceClient;
let n = 0;

function clientFor(email: string, key: string, keyId: string): SecretManagerServiceClient {
  const [host, port] = d.endpoint.split(':');
  return new SecretManagerServiceClient({
    auth: new GoogleAuth({ authClient: new JWT({ email, key, keyId }) }),
    apiEndpoint: host!,
    port: Number(port),
  });
}

beforeAll(async () => {
  d = await startSecretManagerDouble({
    projects: [
      { id: PROJECT, number: NUMBER },
      { id: 'off-project', number: '838383838383', secretManagerEnabled: false },
    ],
  });
  const a = d.serviceAccount('admin', ['roles/secretmanager.admin'], PROJECT);
  admin = clientFor(a.client_email, a.private_key, a.private_key_id);
  const v = d.serviceAccount('viewer', ['roles/secretmanager.viewer'], PROJECT);
  viewer = clientFor(v.client_email, v.private_key, v.private_key_id);
});

afterAll(async () => {
  await admin?.close();
  await viewer?.close();
  await d?.close();
  untrust();
});

const fresh = () => `projects/${PROJECT}/secrets/double-${++n}`;
const create = (name: string, secret: Record<string, unknown> = { replication: { automatic: {} } }) =>
  admin.createSecret({ parent: `projects/${PROJECT}`, secretId: name.split('/').at(-1)!, secret });
const add = (name: string, data: string) => admin.addSecretVersion({ parent: name, payload: { data: Buffer.from(data) } });

describe('the Secret Manager double, through the real client', () => {
  it('answers names with the project number, and NOT_FOUND and ALREADY_EXISTS as the service words them', async () => {
    const name = fresh();
    const id = name.split('/').at(-1);
    await expect(admin.getSecret({ name })).rejects.toMatchObject({
      code: status.NOT_FOUND,
      details: `Secret [projects/${NUMBER}/secrets/${id}] not found.`,
    });
    const [created] = await create(name);
    expect(created.name).toBe(`projects/${NUMBER}/secrets/${id}`);
    expect(created.etag).toMatch(/^"[0-9a-f]+"$/);
    await expect(create(name)).rejects.toMatchObject({ code: status.ALREADY_EXISTS });
  });

  it('denies alike whether the secret exists or not, with the permission in a google.rpc.ErrorInfo', async () => {
    const name = fresh();
    await create(name);
    for (const resource of [name, fresh()]) {
      const error = await viewer.addSecretVersion({ parent: resource, payload: { data: Buffer.from('x') } }).catch((e: unknown) => e);
      expect(error).toMatchObject({
        code: status.PERMISSION_DENIED,
        details: `Permission 'secretmanager.versions.add' denied for resource '${resource}' (or it may not exist).`,
        reason: 'IAM_PERMISSION_DENIED',
        domain: 'secretmanager.googleapis.com',
        errorInfoMetadata: { permission: 'secretmanager.versions.add', resource },
      });
    }
    // And testIamPermissions answers what is held, asking for no permission itself.
    const [held] = await viewer.testIamPermissions({
      resource: name,
      permissions: ['secretmanager.secrets.get', 'secretmanager.versions.add'],
    });
    expect(held.permissions).toEqual(['secretmanager.secrets.get']);
  });

  it('tells a project whose API is disabled apart, as SERVICE_DISABLED', async () => {
    await expect(admin.getSecret({ name: 'projects/off-project/secrets/x' })).rejects.toMatchObject({
      code: status.PERMISSION_DENIED,
      reason: 'SERVICE_DISABLED',
      errorInfoMetadata: expect.objectContaining({ consumer: 'projects/838383838383', service: 'secretmanager.googleapis.com' }),
    });
  });

  it('holds labels and annotations to their documented rules, with a BadRequest detail', async () => {
    await expect(create(fresh(), { replication: { automatic: {} }, labels: { Team: 'x' } })).rejects.toMatchObject({
      code: status.INVALID_ARGUMENT,
      statusDetails: [expect.objectContaining({ fieldViolations: [expect.objectContaining({ field: 'secret.labels' })] })],
    });
    await expect(create(fresh(), { replication: { automatic: {} }, labels: { team: 'UPPER' } })).rejects.toMatchObject({
      code: status.INVALID_ARGUMENT,
    });
    // A Kubernetes-style key with a `/` is no annotation key here: why the sink's keys use dots.
    await expect(
      create(fresh(), { replication: { automatic: {} }, annotations: { 'token-rotator.io/rotation-id': 'r' } }),
    ).rejects.toMatchObject({
      code: status.INVALID_ARGUMENT,
      details: "Annotation key 'token-rotator.io/rotation-id' violates format constraints.",
    });
    const [ok] = await create(fresh(), {
      replication: { userManaged: { replicas: [{ location: 'europe-west1' }] } },
      labels: { équipe: 'données', 'managed-by': 'token-rotator' },
      annotations: { 'token-rotator.rotated-at': '2026-11-22T12:00:00.000Z' },
    });
    expect(ok.replication?.userManaged?.replicas).toEqual([expect.objectContaining({ location: 'europe-west1' })]);
    await expect(create(fresh(), {})).rejects.toMatchObject({ code: status.INVALID_ARGUMENT, details: 'Secret.replication is required.' });
  });

  it('checks a payload against its CRC32C, computes one when none is sent, and returns it on access', async () => {
    const name = fresh();
    await create(name);
    await expect(admin.addSecretVersion({ parent: name, payload: { data: Buffer.from('abc'), dataCrc32c: 1 } })).rejects.toMatchObject({
      code: status.INVALID_ARGUMENT,
    });
    const [withSum] = await admin.addSecretVersion({ parent: name, payload: { data: Buffer.from('123456789'), dataCrc32c: 0xe3069283 } });
    expect(withSum).toMatchObject({
      name: `projects/${NUMBER}/secrets/${name.split('/').at(-1)}/versions/1`,
      state: 'ENABLED',
      clientSpecifiedPayloadChecksum: true,
    });
    const [without] = await add(name, '123456789');
    expect(without.clientSpecifiedPayloadChecksum).toBe(false);
    const [accessed] = await admin.accessSecretVersion({ name: `${name}/versions/latest` });
    expect(Buffer.from(accessed.payload!.data as Uint8Array).toString()).toBe('123456789');
    expect(String(accessed.payload!.dataCrc32c)).toBe(String(0xe3069283));
    expect(accessed.name).toMatch(/\/versions\/2$/);
  });

  it('resolves latest to the newest version whatever its state, numbers versions for good, and lists them newest first', async () => {
    const name = fresh();
    const id = name.split('/').at(-1);
    await create(name);
    await expect(admin.accessSecretVersion({ name: `${name}/versions/latest` })).rejects.toMatchObject({
      code: status.NOT_FOUND,
      details: `Secret [projects/${NUMBER}/secrets/${id}] not found or has no versions.`,
    });
    await add(name, 'one');
    await add(name, 'two');
    await admin.disableSecretVersion({ name: `${name}/versions/2` });
    await expect(admin.accessSecretVersion({ name: `${name}/versions/latest` })).rejects.toMatchObject({
      code: status.FAILED_PRECONDITION,
      details: `Secret Version [projects/${NUMBER}/secrets/${id}/versions/2] is in DISABLED state.`,
    });
    const [first] = await admin.accessSecretVersion({ name: `${name}/versions/1` });
    expect(Buffer.from(first.payload!.data as Uint8Array).toString()).toBe('one');
    await admin.destroySecretVersion({ name: `${name}/versions/2` });
    await expect(admin.enableSecretVersion({ name: `${name}/versions/2` })).rejects.toMatchObject({ code: status.FAILED_PRECONDITION });
    const [third] = await add(name, 'three');
    expect(third.name).toMatch(/\/versions\/3$/);
    const [listed] = await admin.listSecretVersions({ parent: name });
    expect(listed.map((v) => [v.name?.split('/').at(-1), v.state])).toEqual([
      ['3', 'ENABLED'],
      ['2', 'DESTROYED'],
      ['1', 'ENABLED'],
    ]);
    await admin.updateSecret({ secret: { name, versionAliases: { stable: 1 } }, updateMask: { paths: ['version_aliases'] } });
    const [aliased] = await admin.accessSecretVersion({ name: `${name}/versions/stable` });
    expect(aliased.name).toMatch(/\/versions\/1$/);
  });

  it('updates only what the mask names, refuses a stale etag, and refuses a mask it cannot apply', async () => {
    const name = fresh();
    const [created] = await create(name, { replication: { automatic: {} }, labels: { a: '1' }, annotations: { 'x.note': 'kept' } });
    const [updated] = await admin.updateSecret({
      secret: { name, labels: { b: '2' }, annotations: { ignored: 'x' } },
      updateMask: { paths: ['labels'] },
    });
    expect(updated.labels).toEqual({ b: '2' });
    expect(updated.annotations).toEqual({ 'x.note': 'kept' });
    expect(updated.etag).not.toBe(created.etag);
    await expect(
      admin.updateSecret({ secret: { name, labels: {}, etag: created.etag! }, updateMask: { paths: ['labels'] } }),
    ).rejects.toMatchObject({
      code: status.FAILED_PRECONDITION,
    });
    await expect(admin.updateSecret({ secret: { name, labels: {} }, updateMask: { paths: [] } })).rejects.toMatchObject({
      code: status.INVALID_ARGUMENT,
    });
    await expect(
      admin.updateSecret({ secret: { name, replication: { automatic: {} } }, updateMask: { paths: ['replication'] } }),
    ).rejects.toMatchObject({
      code: status.INVALID_ARGUMENT,
    });
  });

  it('refuses a JWT signed by a key it does not know, as UNAUTHENTICATED', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const stranger = clientFor(
      'stranger@double-project.iam.gserviceaccount.com',
      privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
      'not-a-known-key',
    );
    try {
      await expect(stranger.getSecret({ name: fresh() })).rejects.toMatchObject({
        code: status.UNAUTHENTICATED,
        reason: 'ACCESS_TOKEN_TYPE_UNSUPPORTED',
      });
    } finally {
      await stranger.close();
    }
  });
});

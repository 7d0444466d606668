import { rm } from 'node:fs/promises';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { Secret } from '../../src/secret.js';
import { FILE_FORMATS } from '../../src/sinks/file/file-format.js';
import { type KubernetesSecretSinkConfig, kubernetesSecretSinkType } from '../../src/sinks/kubernetes-secret/kubernetes-secret-sink.js';
import type { SinkClient, TokenMeta } from '../../src/sinks/sink.js';
import { sinkContract } from '../contracts/sink-contract.js';
import { silentLogger } from '../fakes/fake-deps.js';
import { type KubernetesHere, kubernetesHere, secretData } from '../helpers/kubernetes.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let k: KubernetesHere;
let dir: string;
let count = 0;

beforeAll(async () => {
  dir = await makeTempDir();
  k = await kubernetesHere(dir, { namespaces: ['apps', 'token-rotator'] });
});
afterAll(async () => {
  await k.double.close();
  await rm(dir, { recursive: true, force: true });
});

function configOf(raw: Record<string, unknown>): KubernetesSecretSinkConfig {
  const parsed = kubernetesSecretSinkType.parse({ type: 'kubernetes-secret', ...raw }, { policyDir: dir, env: k.env });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.config;
}

/** The secret as someone else would have put it in the key, in the sink's format, with no metadata of ours. */
function foreignContent(config: KubernetesSecretSinkConfig, secret: Secret): string {
  switch (config.format) {
    case 'raw':
      return secret.reveal();
    case 'env':
      return `${config.envKey}=${secret.reveal()}\n`;
    case 'json':
      return JSON.stringify({ token: secret.reveal() });
  }
}

for (const format of FILE_FORMATS) {
  sinkContract(`kubernetes-secret (${format})`, { ownership: 'marker', preflight: true }, () => ({
    type: kubernetesSecretSinkType,
    // It connects through the kubeconfig, as kubectl would; it takes no credential by reference.
    context: { env: k.env, reference: () => undefined },
    config: () => configOf({ name: `contract-${format}-${++count}`, namespace: 'apps', format }),
    // The annotations carry the metadata, whatever the format of the key.
    carriesMetadata: () => true,
    async plantForeign(config, secret) {
      // As `kubectl create secret generic` leaves it: no label of ours.
      k.double.objects.put({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: config.name, namespace: config.namespace },
        type: 'Opaque',
        stringData: { [config.key]: foreignContent(config, secret) },
      });
    },
    async breakDestination(config) {
      // Ours, but frozen: the API server refuses any change to an immutable Secret's data.
      k.double.objects.put({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: config.name, namespace: config.namespace, labels: { 'app.kubernetes.io/managed-by': 'token-rotator' } },
        type: 'Opaque',
        immutable: true,
        stringData: { [config.key]: 'frozen' },
      });
    },
  }));
}

describe('the kubernetes-secret sink, beyond the contract', () => {
  const meta = (over: Partial<TokenMeta> = {}): TokenMeta => ({
    name: 'ingest',
    id: 'tok-2',
    expiresAt: new Date('2027-01-01T00:00:00.000Z'),
    rotationId: 'rot-1',
    rotatedAt: new Date('2026-11-22T12:00:00.000Z'),
    ...over,
  });
  const open = (): Promise<SinkClient<KubernetesSecretSinkConfig>> =>
    kubernetesSecretSinkType.open({ logger: silentLogger(), env: k.env, reference: () => undefined });

  it("keeps the Secret's other keys, labels and annotations, and marks it as ours without the secret", async () => {
    const config = configOf({
      name: 'shared',
      namespace: 'apps',
      labels: { team: 'ingest' },
      annotations: { 'example.com/owner': 'ingest' },
    });
    k.double.objects.put({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 'shared',
        namespace: 'apps',
        labels: { 'app.kubernetes.io/managed-by': 'token-rotator', keep: 'me' },
        annotations: { note: 'hand' },
      },
      type: 'Opaque',
      stringData: { other: 'kept', token: 'old' },
    });
    const client = await open();
    expect(await client.write(config, new Secret('s3cret-canary-shared'), meta(), {})).toBe('updated');
    const stored = k.double.objects.get('secrets', 'apps', 'shared') as {
      metadata: { labels: Record<string, string>; annotations: Record<string, string> };
    };
    expect(secretData(k.double, 'apps', 'shared', 'token')).toBe('s3cret-canary-shared');
    expect(secretData(k.double, 'apps', 'shared', 'other')).toBe('kept');
    expect(stored.metadata.labels).toEqual({ 'app.kubernetes.io/managed-by': 'token-rotator', keep: 'me', team: 'ingest' });
    expect(stored.metadata.annotations).toEqual({
      note: 'hand',
      'example.com/owner': 'ingest',
      'token-rotator.io/token-name': 'ingest',
      'token-rotator.io/token-id': 'tok-2',
      'token-rotator.io/expires-at': '2027-01-01T00:00:00.000Z',
      'token-rotator.io/rotation-id': 'rot-1',
      'token-rotator.io/rotated-at': '2026-11-22T12:00:00.000Z',
    });
    expect(JSON.stringify(stored.metadata)).not.toContain('s3cret-canary-shared');
    const apply = k.double.requests.filter((r) => r.method === 'PATCH' && r.path.endsWith('/secrets/shared')).at(-1)!;
    expect(apply).toMatchObject({
      contentType: 'application/apply-patch+yaml',
      fieldManager: 'token-rotator',
      query: expect.objectContaining({ force: 'true' }),
    });
  });

  it('does not write again what it already holds: one read, no patch', async () => {
    const config = configOf({ name: 'quiet', namespace: 'apps' });
    const client = await open();
    await client.write(config, new Secret('same'), meta(), {});
    const before = k.double.requests.length;
    expect(await client.write(config, new Secret('same'), meta(), {})).toBe('unchanged');
    expect(k.double.requests.slice(before).map((r) => r.method)).toEqual(['GET']);
  });

  it('refuses a Secret of another type, naming both, since a type cannot change', async () => {
    const config = configOf({ name: 'typed', namespace: 'apps' });
    k.double.objects.put({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'typed', namespace: 'apps', labels: { 'app.kubernetes.io/managed-by': 'token-rotator' } },
      type: 'example.com/other',
      stringData: { token: 'x' },
    });
    const client = await open();
    await expect(client.write(config, new Secret('s'), meta(), {})).rejects.toMatchObject({
      code: 'ERR_SINK',
      message: expect.stringMatching(/kubernetes-secret apps\/typed\[token\].*type example\.com\/other.*secretType: example\.com\/other/),
    });
  });

  it('reads the current id from the annotations, whatever the format of the key', async () => {
    const config = configOf({ name: 'envfile', namespace: 'apps', format: 'env', envKey: 'INGEST_TOKEN' });
    const client = await open();
    await client.write(config, new Secret('env-secret'), meta(), {});
    expect(secretData(k.double, 'apps', 'envfile', 'token')).toBe('INGEST_TOKEN=env-secret\n');
    const content = await client.read(config, {});
    expect(content?.secret?.reveal()).toBe('env-secret');
    expect(content?.meta).toEqual({
      name: 'ingest',
      id: 'tok-2',
      expiresAt: '2027-01-01T00:00:00.000Z',
      rotationId: 'rot-1',
      rotatedAt: '2026-11-22T12:00:00.000Z',
    });
  });

  describe('reads from one listing per namespace', () => {
    const SECRET_COLLECTION = (namespace: string) => `/api/v1/namespaces/${namespace}/secrets`;
    const requestsSince = (index: number, namespace: string) =>
      k.double.requests.slice(index).filter((r) => r.path.startsWith(SECRET_COLLECTION(namespace)));
    const ours = (namespace: string, name: string, value: string) =>
      k.double.objects.put({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name, namespace, labels: { 'app.kubernetes.io/managed-by': 'token-rotator' } },
        type: 'Opaque',
        stringData: { token: value },
      });

    it('answers 100 concurrent reads in one namespace with exactly one LIST', async () => {
      k.double.objects.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'hundred' } });
      const configs = Array.from({ length: 100 }, (_, i) => configOf({ name: `s-${i}`, namespace: 'hundred' }));
      for (const config of configs) ours('hundred', config.name, `value-${config.name}`);
      const client = await open();
      const before = k.double.requests.length;
      const contents = await Promise.all(configs.map((config) => client.read(config, {})));
      expect(contents.map((c) => c?.secret?.reveal())).toEqual(configs.map((c) => `value-${c.name}`));
      expect(requestsSince(before, 'hundred').map((r) => `${r.verb} ${r.path}`)).toEqual(['list /api/v1/namespaces/hundred/secrets']);
      await client.close();
    });

    it('asks again for a Secret it has read: a listing never answers the same Secret twice, so a deletion is seen at once', async () => {
      const config = configOf({ name: 'reread', namespace: 'apps' });
      ours('apps', 'reread', 'first');
      const client = await open();
      expect((await client.read(config, {}))?.secret?.reveal()).toBe('first');
      k.double.objects.delete('secrets', 'apps', 'reread');
      expect(await client.read(config, {})).toBeUndefined();
      ours('apps', 'reread', 'second');
      expect((await client.read(config, {}))?.secret?.reveal()).toBe('second');
      await client.close();
    });

    it('reads what it has just written from a listing requested after the write, never the listing from before it', async () => {
      const config = configOf({ name: 'rewritten', namespace: 'apps' });
      ours('apps', 'rewritten', 'old-value');
      ours('apps', 'neighbour', 'other-value');
      const client = await open();
      // Reading a neighbour lists the namespace: the listing holds this Secret as it was before the write.
      expect((await client.read(configOf({ name: 'neighbour', namespace: 'apps' }), {}))?.secret?.reveal()).toBe('other-value');
      expect(await client.write(config, new Secret('new-value'), meta(), {})).toBe('updated');
      const before = k.double.requests.length;
      const after = await client.read(config, {});
      expect(after?.secret?.reveal()).toBe('new-value');
      expect(after?.meta).toMatchObject({ id: 'tok-2', rotationId: 'rot-1' });
      // One new listing: a deletion between our write and this read would be seen.
      expect(requestsSince(before, 'apps')).toHaveLength(1);
      await client.close();
    });
  });

  it('names the Secret and the missing namespace when the API refuses, never the bearer', async () => {
    const config = configOf({ name: 'nowhere', namespace: 'no-such-namespace' });
    const client = await open();
    const error = await client.write(config, new Secret('s'), meta(), {}).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toMatch(/kubernetes-secret no-such-namespace\/nowhere\[token\].*404 NotFound/);
    expect(String(error?.stack)).not.toContain(k.double.token);
  });

  it('says what it could not do when the API server refuses: read or write, not "reach"', async () => {
    const config = configOf({ name: `refused-${++count}`, namespace: 'apps' });
    const client = await open();
    const failed = (call: Promise<unknown>) =>
      call.then(
        () => undefined,
        (e: unknown) => (e as Error).message,
      );
    try {
      // A write reads the Secret first (is it ours, of the right type, holding this already?).
      k.double.forbidden.push({ verb: 'get', resource: 'secrets', namespace: 'apps' });
      const reading = await failed(client.write(config, new Secret('s-refused'), meta(), {}));
      const checkingRead = await failed(client.preflight!(config, {}));
      k.double.forbidden.length = 0;
      k.double.forbidden.push({ verb: 'patch', resource: 'secrets', namespace: 'apps' });
      const writing = await failed(client.write(config, new Secret('s-refused'), meta(), {}));
      const checkingWrite = await failed(client.preflight!(config, {}));
      for (const message of [reading, checkingRead])
        expect(message).toMatch(/^cannot read kubernetes-secret apps\/refused-\d+\[token\]: .*403 Forbidden.*cannot get/);
      for (const message of [writing, checkingWrite])
        expect(message).toMatch(/^cannot write kubernetes-secret apps\/refused-\d+\[token\]: .*403 Forbidden.*cannot patch/);
      // The server was reached: it refused.
      for (const message of [reading, checkingRead, writing, checkingWrite]) expect(message).not.toMatch(/cannot reach/);
    } finally {
      k.double.forbidden.length = 0;
    }
    await client.close();
  });
});

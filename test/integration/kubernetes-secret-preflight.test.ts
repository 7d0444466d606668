import { rm } from 'node:fs/promises';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { type KubernetesSecretSinkConfig, kubernetesSecretSinkType } from '../../src/sinks/kubernetes-secret/kubernetes-secret-sink.js';
import type { SinkClient } from '../../src/sinks/sink.js';
import { silentLogger } from '../fakes/fake-deps.js';
import { type KubernetesHere, kubernetesHere } from '../helpers/kubernetes.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/**
 * The preflight a rotation runs before regenerating: whatever would make the write fail must fail
 * here, without changing anything, or a new secret is made and stranded.
 */
let k: KubernetesHere;
let dir: string;
let client: SinkClient<KubernetesSecretSinkConfig>;
let count = 0;

beforeAll(async () => {
  dir = await makeTempDir();
  k = await kubernetesHere(dir, { namespaces: ['apps', 'token-rotator'] });
  client = await kubernetesSecretSinkType.open({ logger: silentLogger(), env: k.env, reference: () => undefined });
});
afterEach(() => {
  k.double.forbidden.length = 0;
});
afterAll(async () => {
  await client.close();
  await k.double.close();
  await rm(dir, { recursive: true, force: true });
});

function configOf(raw: Record<string, unknown>): KubernetesSecretSinkConfig {
  const parsed = kubernetesSecretSinkType.parse({ type: 'kubernetes-secret', ...raw }, { policyDir: dir, env: k.env });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.config;
}

const failure = (call: Promise<unknown>): Promise<string | undefined> =>
  call.then(
    () => undefined,
    (e: unknown) => (e as Error).message,
  );

/** The request log from `from` on: what the preflight asked, in order. */
const requestsSince = (from: number) => k.double.requests.slice(from).map((r) => `${r.verb} ${r.path} ${r.status}`);

const ours = { 'app.kubernetes.io/managed-by': 'token-rotator' };

describe('the kubernetes-secret preflight', () => {
  it('passes for a new Secret in an existing namespace: one GET, one dry-run apply, nothing stored', async () => {
    const config = configOf({ name: `new-${++count}`, namespace: 'apps' });
    const from = k.double.requests.length;
    await expect(client.preflight!(config, {})).resolves.toBeUndefined();
    expect(requestsSince(from)).toEqual([
      `get /api/v1/namespaces/apps/secrets/${config.name} 404`,
      `patch /api/v1/namespaces/apps/secrets/${config.name} 201`,
    ]);
    expect(k.double.requests.at(-1)?.query).toMatchObject({ dryRun: 'All', fieldManager: 'token-rotator', force: 'true' });
    expect(k.double.objects.get('secrets', 'apps', config.name)).toBeUndefined();
  });

  it('refuses a namespace that does not exist, naming the sink and the namespace', async () => {
    const config = configOf({ name: `nowhere-${++count}`, namespace: 'appz' });
    const message = await failure(client.preflight!(config, {}));
    expect(message).toMatch(
      new RegExp(`^cannot write kubernetes-secret appz/${config.name}\\[token\\]: .*404 NotFound: namespaces "appz" not found`),
    );
    expect(message).toContain('the namespace appz does not exist: create it, or correct namespace on the sink');
  });

  it('refuses when RBAC forbids patch on secrets, naming the verb', async () => {
    const config = configOf({ name: `no-patch-${++count}`, namespace: 'apps' });
    k.double.forbidden.push({ verb: 'patch', resource: 'secrets', namespace: 'apps' });
    expect(await failure(client.preflight!(config, {}))).toMatch(
      new RegExp(`^cannot write kubernetes-secret apps/${config.name}\\[token\\]: .*403 Forbidden.*cannot patch resource "secrets"`),
    );
  });

  it('refuses a Secret it would create when RBAC forbids create, as the API server authorizes an apply that creates', async () => {
    const config = configOf({ name: `no-create-${++count}`, namespace: 'apps' });
    k.double.forbidden.push({ verb: 'create', resource: 'secrets', namespace: 'apps' });
    const message = await failure(client.preflight!(config, {}));
    expect(message).toMatch(new RegExp(`^cannot write kubernetes-secret apps/${config.name}\\[token\\]: .*403 Forbidden`));
    expect(message).toContain('creating the Secret needs create on secrets in apps, besides get and patch');
    expect(k.double.objects.get('secrets', 'apps', config.name)).toBeUndefined();
  });

  it('passes for an existing Secret of ours when only create is forbidden: an apply that updates is authorized as patch', async () => {
    const config = configOf({ name: `exists-${++count}`, namespace: 'apps' });
    k.double.objects.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: config.name, namespace: 'apps', labels: ours } });
    k.double.forbidden.push({ verb: 'create', resource: 'secrets', namespace: 'apps' });
    await expect(client.preflight!(config, {})).resolves.toBeUndefined();
  });

  it('refuses an existing Secret without the managed-by label unless adopt, and writes nothing', async () => {
    const config = configOf({ name: `foreign-${++count}`, namespace: 'apps' });
    const stored = k.double.objects.put({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: config.name, namespace: 'apps' },
      stringData: { token: 'theirs' },
    });
    const from = k.double.requests.length;
    expect(await failure(client.preflight!(config, {}))).toBe(
      `refusing to write kubernetes-secret apps/${config.name}[token]: it exists and is not managed by token-rotator (no app.kubernetes.io/managed-by label); set adopt: true on the sink to take it over`,
    );
    expect(requestsSince(from)).toEqual([`get /api/v1/namespaces/apps/secrets/${config.name} 200`]);
    await expect(client.preflight!({ ...config, adopt: true }, {})).resolves.toBeUndefined();
    expect(k.double.objects.get('secrets', 'apps', config.name)).toEqual(stored);
  });

  it('refuses a Secret of another type, saying what to set, as the write does', async () => {
    const config = configOf({ name: `typed-${++count}`, namespace: 'apps' });
    k.double.objects.put({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: config.name, namespace: 'apps', labels: ours },
      type: 'kubernetes.io/basic-auth',
      stringData: { username: 'u' },
    });
    expect(await failure(client.preflight!(config, {}))).toBe(
      `cannot write kubernetes-secret apps/${config.name}[token]: it has type kubernetes.io/basic-auth, and a Secret's type cannot change; set secretType: kubernetes.io/basic-auth on the sink or remove the Secret`,
    );
  });

  it('refuses an immutable Secret, whose data the API server will not change, even on a dry run', async () => {
    const config = configOf({ name: `frozen-${++count}`, namespace: 'apps' });
    const stored = k.double.objects.put({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: config.name, namespace: 'apps', labels: ours },
      immutable: true,
      stringData: { token: 'frozen' },
    });
    const from = k.double.requests.length;
    const message = await failure(client.preflight!(config, {}));
    expect(message).toMatch(
      new RegExp(
        `^cannot write kubernetes-secret apps/${config.name}\\[token\\]: .*422 Invalid: Secret "${config.name}" is invalid: data: Forbidden: field is immutable when \`immutable\` is set`,
      ),
    );
    expect(message).toContain(
      `it is immutable (immutable: true), so its data cannot change: delete it (kubectl delete secret -n apps ${config.name}) for token-rotator to create it anew`,
    );
    expect(requestsSince(from)).toEqual([
      `get /api/v1/namespaces/apps/secrets/${config.name} 200`,
      `patch /api/v1/namespaces/apps/secrets/${config.name} 422`,
    ]);
    expect(k.double.objects.get('secrets', 'apps', config.name)).toEqual(stored);
  });
});

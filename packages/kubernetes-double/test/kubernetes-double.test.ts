import { execFile } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';

import { makeTempDir } from '../../../test/helpers/temp-dir.js';
import { type JsonObject, type KubernetesDouble, startKubernetesDouble } from '../src/index.js';

interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

type Json = Record<string, unknown>;

const b64 = (text: string) => Buffer.from(text).toString('base64');

/**
 * The proof of the double's fidelity: the real kubectl (1.32) working against it, with a
 * kubeconfig written from double.kubeconfig(), next to raw API calls as token-rotator makes them.
 */
describe('Kubernetes API double, as the real kubectl sees it', () => {
  let double: KubernetesDouble;
  let dir: string;

  beforeAll(async () => {
    double = await startKubernetesDouble({ namespaces: ['ci'] });
    dir = await makeTempDir('kubernetes-double-');
    await writeFile(join(dir, 'kubeconfig'), double.kubeconfig(), { mode: 0o600 });
  });
  afterAll(async () => {
    await double?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  function kubectl(...args: string[]): Promise<KubectlResult> {
    return new Promise((resolve) => {
      execFile(
        'kubectl',
        ['--kubeconfig', join(dir, 'kubeconfig'), '--cache-dir', join(dir, 'cache'), ...args],
        // Only what kubectl needs: a developer's own KUBECONFIG or cluster must not leak in.
        { env: { PATH: process.env.PATH ?? '', HOME: dir }, timeout: 20_000 },
        (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
      );
    });
  }

  async function kubectlOk(...args: string[]): Promise<string> {
    const result = await kubectl(...args);
    expect(result.code, `kubectl ${args.join(' ')}: ${result.stderr}`).toBe(0);
    return result.stdout;
  }

  async function manifest(name: string, object: unknown): Promise<string> {
    const file = join(dir, name);
    await writeFile(file, stringify(object));
    return file;
  }

  async function api(method: string, path: string, options: { body?: unknown; contentType?: string; token?: string | null } = {}) {
    const headers: Record<string, string> = {};
    if (options.token !== null) headers.authorization = `Bearer ${options.token ?? double.token}`;
    if (options.contentType) headers['content-type'] = options.contentType;
    const response = await fetch(`${double.url}${path}`, {
      method,
      headers,
      ...(options.body !== undefined ? { body: typeof options.body === 'string' ? options.body : JSON.stringify(options.body) } : {}),
    });
    return { status: response.status, body: (await response.json()) as Json };
  }

  const secretPath = (name: string, namespace = 'default') => `/api/v1/namespaces/${namespace}/secrets/${name}`;
  const apply = (path: string, config: unknown, manager: string, force = false) =>
    api('PATCH', `${path}?fieldManager=${manager}${force ? '&force=true' : ''}`, {
      body: config,
      contentType: 'application/apply-patch+yaml',
    });
  const managers = (object: Json) =>
    Object.fromEntries(
      ((object.metadata as Json).managedFields as Json[]).map((e) => [`${String(e.manager)}/${String(e.operation)}`, e.fieldsV1]),
    );

  it('round-trips kubectl create secret generic through kubectl get -o jsonpath, and folds stringData', async () => {
    await kubectlOk('create', 'secret', 'generic', 'created', '--from-literal=key=s3cr3t-value', '--from-literal=other=x');
    expect(await kubectlOk('get', 'secret', 'created', '-o', 'jsonpath={.data.key}')).toBe(b64('s3cr3t-value'));
    // kubectl's typed client sent protobuf; the managed fields are those of a create by kubectl-create.
    expect(double.requests.find((r) => r.method === 'POST')).toMatchObject({
      path: secretPath('').slice(0, -1),
      contentType: 'application/vnd.kubernetes.protobuf',
      fieldManager: 'kubectl-create',
      status: 201,
    });
    expect(managers(double.objects.get('secrets', 'default', 'created')!)).toEqual({
      'kubectl-create/Update': { 'f:data': { '.': {}, 'f:key': {}, 'f:other': {} }, 'f:type': {} },
    });

    const posted = await api('POST', '/api/v1/namespaces/default/secrets', {
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'folded' },
        data: { a: b64('from-data') },
        stringData: { b: 'from-string-data', a: 'wins' },
      },
      contentType: 'application/json',
    });
    expect(posted.status).toBe(201);
    expect(posted.body.stringData).toBeUndefined();
    expect(posted.body.data).toEqual({ a: b64('wins'), b: b64('from-string-data') });
    expect(await kubectlOk('get', 'secret', 'folded', '-o', 'jsonpath={.data.b}')).toBe(b64('from-string-data'));
    expect((await api('GET', secretPath('folded'))).body.stringData).toBeUndefined();
  });

  it('keeps each field manager to its own fields under server-side apply, with conflicts and force', async () => {
    const file = await manifest('app-secret.yaml', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'app', labels: { 'app.kubernetes.io/name': 'app', team: 'payments' } },
      data: { username: b64('admin'), password: b64('hunter2') },
    });
    expect(await kubectlOk('apply', '--server-side', '-f', file)).toContain('secret/app serverside-applied');

    const rotatorConfig = (token: string, labels?: Record<string, string>) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'app', ...(labels ? { labels } : {}) },
      data: { token: b64(token) },
    });
    const first = await apply(
      secretPath('app'),
      rotatorConfig('token-1', { 'app.kubernetes.io/managed-by': 'token-rotator' }),
      'token-rotator',
    );
    expect(first.status).toBe(200);

    // kubectl sees both managers' fields, each attributed to its manager.
    const both = JSON.parse(await kubectlOk('get', 'secret', 'app', '-o', 'json', '--show-managed-fields')) as Json;
    expect(Object.keys(both.data as Json).sort()).toEqual(['password', 'token', 'username']);
    expect(both.metadata).toMatchObject({
      labels: { 'app.kubernetes.io/name': 'app', team: 'payments', 'app.kubernetes.io/managed-by': 'token-rotator' },
    });
    expect(managers(both)).toEqual({
      'kubectl/Apply': {
        'f:data': { 'f:password': {}, 'f:username': {} },
        'f:metadata': { 'f:labels': { 'f:app.kubernetes.io/name': {}, 'f:team': {} } },
      },
      'token-rotator/Apply': { 'f:data': { 'f:token': {} }, 'f:metadata': { 'f:labels': { 'f:app.kubernetes.io/managed-by': {} } } },
    });

    // Applied again without its label: only that label goes; kubectl's labels and keys stay.
    const second = await apply(secretPath('app'), rotatorConfig('token-2'), 'token-rotator');
    expect(second.status).toBe(200);
    expect(await kubectlOk('get', 'secret', 'app', '-o', 'jsonpath={.metadata.labels}')).toBe(
      '{"app.kubernetes.io/name":"app","team":"payments"}',
    );
    expect(await kubectlOk('get', 'secret', 'app', '-o', 'jsonpath={.data.token} {.data.password}')).toBe(
      `${b64('token-2')} ${b64('hunter2')}`,
    );

    // Changing a key kubectl owns is a conflict, and the object is untouched.
    const before = (await api('GET', secretPath('app'))).body;
    const takeover = { ...rotatorConfig('token-2'), data: { token: b64('token-2'), password: b64('rotated') } };
    const conflict = await apply(secretPath('app'), takeover, 'token-rotator');
    expect(conflict).toEqual({
      status: 409,
      body: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'Apply failed with 1 conflict: conflict with "kubectl": .data.password',
        reason: 'Conflict',
        details: { causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "kubectl"', field: '.data.password' }] },
        code: 409,
      },
    });
    expect((await api('GET', secretPath('app'))).body).toEqual(before);

    // Forced, the key changes hands: kubectl no longer owns it, and its own next apply conflicts.
    const forced = await apply(secretPath('app'), takeover, 'token-rotator', true);
    expect(forced.status).toBe(200);
    expect((forced.body.data as Json).password).toBe(b64('rotated'));
    expect(managers(forced.body)).toMatchObject({
      'kubectl/Apply': { 'f:data': { 'f:username': {} } },
      'token-rotator/Apply': { 'f:data': { 'f:password': {}, 'f:token': {} } },
    });
    const reapplied = await kubectl('apply', '--server-side', '-f', file);
    expect(reapplied.code).toBe(1);
    expect(reapplied.stderr).toContain('Apply failed with 1 conflict: conflict with "token-rotator": .data.password');
  });

  it('shows kubectl rollout restart as a pod template annotation, and a strategic merge patch keeps the others', async () => {
    const file = await manifest('web.yaml', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' }, annotations: { 'prometheus.io/scrape': 'true' } },
          spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] },
        },
      },
    });
    await kubectlOk('apply', '--server-side', '-f', file);
    expect(await kubectlOk('get', 'deploy', 'web', '-o', 'jsonpath={.metadata.generation}')).toBe('1');

    expect(await kubectlOk('rollout', 'restart', 'deployment/web')).toContain('deployment.apps/web restarted');
    const restarted = double.objects.get('deployments', 'default', 'web')!;
    const annotations = () =>
      (((double.objects.get('deployments', 'default', 'web')!.spec as Json).template as Json).metadata as Json).annotations as Json;
    expect(Date.parse(String(annotations()['kubectl.kubernetes.io/restartedAt']))).toBeGreaterThan(Date.now() - 60_000);
    expect(annotations()['prometheus.io/scrape']).toBe('true');
    expect((restarted.metadata as Json).generation).toBe(2);
    expect(double.requests.at(-1)).toMatchObject({
      method: 'PATCH',
      contentType: 'application/strategic-merge-patch+json',
      fieldManager: 'kubectl-rollout',
    });

    const patched = await api('PATCH', '/apis/apps/v1/namespaces/default/deployments/web?fieldManager=token-rotator', {
      body: { spec: { template: { metadata: { annotations: { 'token-rotator.io/restartedAt': '2025-01-01T00:00:00Z' } } } } },
      contentType: 'application/strategic-merge-patch+json',
    });
    expect(patched.status).toBe(200);
    expect(Object.keys(annotations()).sort()).toEqual([
      'kubectl.kubernetes.io/restartedAt',
      'prometheus.io/scrape',
      'token-rotator.io/restartedAt',
    ]);
    expect((patched.body.metadata as Json).generation).toBe(3);
    expect((await kubectlOk('get', 'deploy', 'web', '-o', 'wide')).split('\n')[1]).toMatch(
      /^web\s+0\/2\s+0\s+0\s+\S+\s+web\s+nginx:1\.27\s+app=web$/,
    );
  });

  it('answers a stale PUT with 409 Conflict, a missing object with 404 NotFound, and no token with 401', async () => {
    const created = await api('POST', '/api/v1/namespaces/default/secrets', {
      body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'versioned' }, data: { a: b64('1') } },
      contentType: 'application/json',
    });
    const staleVersion = (created.body.metadata as Json).resourceVersion as string;
    const replace = (resourceVersion: string, value: string) =>
      api('PUT', secretPath('versioned'), {
        body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'versioned', resourceVersion }, data: { a: b64(value) } },
        contentType: 'application/json',
      });
    const fresh = await replace(staleVersion, '2');
    expect(fresh.status).toBe(200);
    expect(Number((fresh.body.metadata as Json).resourceVersion)).toBeGreaterThan(Number(staleVersion));

    expect(await replace(staleVersion, '3')).toEqual({
      status: 409,
      body: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message:
          'Operation cannot be fulfilled on secrets "versioned": the object has been modified; please apply your changes to the latest version and try again',
        reason: 'Conflict',
        details: { name: 'versioned', kind: 'secrets' },
        code: 409,
      },
    });
    expect(await kubectlOk('get', 'secret', 'versioned', '-o', 'jsonpath={.data.a}')).toBe(b64('2'));

    expect(await api('GET', secretPath('missing'))).toEqual({
      status: 404,
      body: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'secrets "missing" not found',
        reason: 'NotFound',
        details: { name: 'missing', kind: 'secrets' },
        code: 404,
      },
    });
    expect((await api('GET', '/apis/coordination.k8s.io/v1/namespaces/default/leases/missing')).body).toMatchObject({
      message: 'leases.coordination.k8s.io "missing" not found',
      details: { name: 'missing', group: 'coordination.k8s.io', kind: 'leases' },
    });
    const missing = await kubectl('get', 'secret', 'missing');
    expect(missing.stderr.trim()).toBe('Error from server (NotFound): secrets "missing" not found');

    const unauthorized = {
      status: 401,
      body: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'Unauthorized',
        reason: 'Unauthorized',
        code: 401,
      },
    };
    expect(await api('GET', secretPath('versioned'), { token: null })).toEqual(unauthorized);
    expect(await api('GET', secretPath('versioned'), { token: `${double.token}x` })).toEqual(unauthorized);
    expect(await api('GET', '/version', { token: null })).toEqual(unauthorized);
  });

  it('lists Secrets by label selector and prints Leases, through kubectl', async () => {
    for (const [name, labels] of [
      ['managed-a', { 'app.kubernetes.io/managed-by': 'token-rotator', tier: 'web' }],
      ['managed-b', { 'app.kubernetes.io/managed-by': 'token-rotator', tier: 'db' }],
      ['unmanaged', { tier: 'web' }],
    ] as const) {
      await api('POST', '/api/v1/namespaces/ci/secrets', {
        body: { apiVersion: 'v1', kind: 'Secret', metadata: { name, labels } },
        contentType: 'application/json',
      });
    }
    const names = async (...selector: string[]) =>
      (await kubectlOk('get', 'secrets', '-n', 'ci', ...selector, '-o', 'name')).trim().split('\n').filter(Boolean);
    expect(await names('-l', 'app.kubernetes.io/managed-by=token-rotator')).toEqual(['secret/managed-a', 'secret/managed-b']);
    expect(await names('-l', 'app.kubernetes.io/managed-by=token-rotator,tier!=db')).toEqual(['secret/managed-a']);
    expect(await names('-l', 'tier in (web),!app.kubernetes.io/managed-by')).toEqual(['secret/unmanaged']);
    // `!=` also selects objects without the label at all.
    expect(await names('-l', 'app.kubernetes.io/managed-by!=token-rotator')).toEqual(['secret/unmanaged']);
    expect(await names('--field-selector', 'metadata.name=managed-b')).toEqual(['secret/managed-b']);
    const table = await kubectlOk('get', 'secrets', '-n', 'ci', '-l', 'app.kubernetes.io/managed-by=token-rotator');
    expect(table.split('\n')[0]).toMatch(/^NAME\s+TYPE\s+DATA\s+AGE$/);
    expect(table).toMatch(/^managed-a\s+Opaque\s+0\s+\d+s$/m);

    const lease: JsonObject = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'token-rotator' },
      spec: {
        holderIdentity: 'rotator-0',
        leaseDurationSeconds: 30,
        acquireTime: '2025-05-01T10:00:00.000000Z',
        renewTime: '2025-05-01T12:00:05.250000+02:00',
        leaseTransitions: 0,
      },
    };
    const created = await apply('/apis/coordination.k8s.io/v1/namespaces/ci/leases/token-rotator', lease, 'token-rotator');
    expect(created.status).toBe(201);
    expect((created.body.spec as Json).renewTime).toBe('2025-05-01T10:00:05.250000Z');
    const leases = await kubectlOk('get', 'lease', '-n', 'ci');
    expect(leases.split('\n')[0]).toMatch(/^NAME\s+HOLDER\s+AGE$/);
    expect(leases.split('\n')[1]).toMatch(/^token-rotator\s+rotator-0\s+\d+s$/);
    expect(
      await kubectlOk('get', 'leases.coordination.k8s.io', 'token-rotator', '-n', 'ci', '-o', 'jsonpath={.spec.leaseDurationSeconds}'),
    ).toBe('30');
  });
});

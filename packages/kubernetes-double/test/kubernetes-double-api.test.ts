import { request } from 'node:https';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type JsonObject, type KubernetesDouble, startKubernetesDouble } from '../src/index.js';

type Json = Record<string, unknown>;

const b64 = (text: string) => Buffer.from(text).toString('base64');
const APPLY = 'application/apply-patch+yaml';
const JSON_TYPE = 'application/json';

/** The double's wire protocol, call by call, as token-rotator's client (or any other) meets it. */
describe('Kubernetes API double, raw API', () => {
  let double: KubernetesDouble;

  beforeAll(async () => {
    double = await startKubernetesDouble({ namespaces: ['ci'] });
  });
  afterAll(async () => {
    await double?.close();
  });

  async function api(method: string, path: string, body?: unknown, contentType = JSON_TYPE, headers: Record<string, string> = {}) {
    const response = await fetch(`${double.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${double.token}`, ...(body !== undefined ? { 'content-type': contentType } : {}), ...headers },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    return { status: response.status, body: (await response.json()) as Json, headers: response.headers };
  }

  const secrets = '/api/v1/namespaces/default/secrets';
  const leases = '/apis/coordination.k8s.io/v1/namespaces/default/leases';
  const deployments = '/apis/apps/v1/namespaces/default/deployments';
  const meta = (object: Json) => object.metadata as Json;
  const secret = (name: string, extra: Json = {}) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, ...extra });
  const fieldsOf = (object: Json, manager: string) =>
    (meta(object).managedFields as Json[]).find((e) => e.manager === manager)?.fieldsV1 as Json | undefined;

  it('creates with server-side apply, keeps the resourceVersion when an apply changes nothing, and gives a seeded object its first owner', async () => {
    const created = await api(
      'PATCH',
      `${secrets}/applied?fieldManager=token-rotator`,
      secret('applied', { data: { token: b64('t1') } }),
      APPLY,
    );
    expect(created.status).toBe(201);
    expect(meta(created.body)).toMatchObject({
      name: 'applied',
      namespace: 'default',
      uid: expect.any(String),
      resourceVersion: expect.any(String),
    });
    const again = await api(
      'PATCH',
      `${secrets}/applied?fieldManager=token-rotator`,
      secret('applied', { data: { token: b64('t1') } }),
      APPLY,
    );
    expect(again.status).toBe(200);
    expect(meta(again.body).resourceVersion).toBe(meta(created.body).resourceVersion);
    expect(meta(again.body).managedFields).toEqual(meta(created.body).managedFields);

    // Seeded without managedFields, as an object from before field management: the first apply
    // records the fields it found as `before-first-apply`'s, and changing one of them conflicts.
    double.objects.put(secret('seeded', { metadata: { name: 'seeded', labels: { owner: 'ops' } }, data: { key: b64('old') } }));
    const conflicting = await api(
      'PATCH',
      `${secrets}/seeded?fieldManager=token-rotator`,
      secret('seeded', { data: { key: b64('new') } }),
      APPLY,
    );
    expect(conflicting.status).toBe(409);
    expect(conflicting.body.message).toBe('Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .data.key');
    const added = await api(
      'PATCH',
      `${secrets}/seeded?fieldManager=token-rotator`,
      secret('seeded', { data: { token: b64('t') } }),
      APPLY,
    );
    expect(fieldsOf(added.body, 'before-first-apply')).toEqual({
      'f:data': { '.': {}, 'f:key': {} },
      'f:metadata': { 'f:labels': { '.': {}, 'f:owner': {} } },
      'f:type': {},
    });
    expect(fieldsOf(added.body, 'token-rotator')).toEqual({ 'f:data': { 'f:token': {} } });
  });

  it('takes stringData in an apply as the real server does: folded into data, owned as stringData', async () => {
    const applied = await api(
      'PATCH',
      `${secrets}/string-data?fieldManager=token-rotator`,
      secret('string-data', { stringData: { token: 'plain' } }),
      APPLY,
    );
    expect(applied.status).toBe(201);
    expect(applied.body.data).toEqual({ token: b64('plain') });
    expect(applied.body.stringData).toBeUndefined();
    expect(fieldsOf(applied.body, 'token-rotator')).toEqual({ 'f:stringData': { 'f:token': {} } });
    expect(double.objects.get('secrets', 'default', 'string-data')!.stringData).toBeUndefined();
  });

  it('lets a PUT create a Lease, but an update must name the resourceVersion it replaces; MicroTimes are checked', async () => {
    const lease = (holder: string, resourceVersion?: string) => ({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'lock', ...(resourceVersion ? { resourceVersion } : {}) },
      spec: { holderIdentity: holder, leaseDurationSeconds: 15, renewTime: '2025-03-01T08:00:00.000001-01:00' },
    });
    const created = await api('PUT', `${leases}/lock`, lease('a'));
    expect(created.status).toBe(201);
    expect((created.body.spec as Json).renewTime).toBe('2025-03-01T09:00:00.000001Z');
    const unconditional = await api('PUT', `${leases}/lock`, lease('b'));
    expect(unconditional.status).toBe(422);
    expect(unconditional.body).toMatchObject({
      reason: 'Invalid',
      message: 'leases.coordination.k8s.io "lock" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update',
      details: { name: 'lock', group: 'coordination.k8s.io', kind: 'leases' },
    });
    const taken = await api('PUT', `${leases}/lock`, lease('b', meta(created.body).resourceVersion as string));
    expect(taken.status).toBe(200);
    expect((await api('PUT', `${leases}/lock`, lease('c', meta(created.body).resourceVersion as string))).status).toBe(409);

    const badTime = await api('POST', leases, { ...lease('x'), metadata: { name: 'bad' }, spec: { renewTime: '2025-03-01T08:00:00Z' } });
    expect(badTime.status).toBe(400);
    expect(badTime.body.message).toBe(
      'Lease in version "v1" cannot be handled as a Lease: parsing time "2025-03-01T08:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"',
    );
    const negative = await api('POST', leases, { ...lease('x'), metadata: { name: 'negative' }, spec: { leaseDurationSeconds: 0 } });
    expect(negative.body.message).toBe(
      'Lease.coordination.k8s.io "negative" is invalid: spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0',
    );
  });

  it('validates Secrets as the API server does', async () => {
    expect((await api('POST', secrets, secret('typed', { type: 'kubernetes.io/basic-auth', data: { username: b64('u') } }))).status).toBe(
      201,
    );
    const retyped = await api('PUT', `${secrets}/typed`, secret('typed', { type: 'Opaque', data: { username: b64('u') } }));
    expect(retyped.body).toMatchObject({
      code: 422,
      reason: 'Invalid',
      message: 'Secret "typed" is invalid: type: Invalid value: "Opaque": field is immutable',
      details: {
        name: 'typed',
        kind: 'Secret',
        causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: "Opaque": field is immutable', field: 'type' }],
      },
    });
    const badBase64 = await api('POST', secrets, secret('bad', { data: { key: 'not base64!' } }));
    expect(badBase64).toMatchObject({
      status: 400,
      body: { reason: 'BadRequest', message: 'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 3' },
    });
    const badKey = await api('POST', secrets, secret('bad', { data: { 'a/b': b64('x') } }));
    expect(badKey.status).toBe(422);
    expect((badKey.body.details as Json).causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        message:
          "Invalid value: \"a/b\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
        field: 'data[a/b]',
      },
    ]);
    expect((await api('POST', secrets, secret('typed'))).body).toMatchObject({
      code: 409,
      reason: 'AlreadyExists',
      message: 'secrets "typed" already exists',
    });
    expect((await api('POST', '/api/v1/namespaces/absent/secrets', secret('x'))).body).toMatchObject({
      code: 404,
      message: 'namespaces "absent" not found',
    });

    const strict = await api('POST', `${secrets}?fieldValidation=Strict`, { ...secret('strict'), extra: true });
    expect(strict.body).toMatchObject({
      code: 400,
      message: 'Secret in version "v1" cannot be handled as a Secret: strict decoding error: unknown field "extra"',
    });
    const warned = await api('POST', secrets, { ...secret('warned'), extra: true });
    expect(warned.status).toBe(201);
    expect(warned.headers.get('warning')).toBe('299 - "unknown field \\"extra\\""');
    expect(warned.body.extra).toBeUndefined();
  });

  it('applies the four patch types, and refuses what the real server refuses', async () => {
    await api('POST', secrets, secret('patched', { metadata: { name: 'patched', labels: { a: '1', b: '2' } }, data: { x: b64('x') } }));
    const merged = await api('PATCH', `${secrets}/patched`, { metadata: { labels: { a: null, c: '3' } } }, 'application/merge-patch+json');
    expect(meta(merged.body).labels).toEqual({ b: '2', c: '3' });
    const jsonPatched = await api(
      'PATCH',
      `${secrets}/patched`,
      [
        { op: 'test', path: '/metadata/labels/b', value: '2' },
        { op: 'add', path: '/data/y', value: b64('y') },
        { op: 'remove', path: '/data/x' },
      ],
      'application/json-patch+json',
    );
    expect(jsonPatched.body.data).toEqual({ y: b64('y') });
    const failedTest = await api(
      'PATCH',
      `${secrets}/patched`,
      [{ op: 'test', path: '/data/y', value: 'nope' }],
      'application/json-patch+json',
    );
    expect(failedTest).toMatchObject({
      status: 422,
      body: { reason: 'Invalid', message: 'the server rejected our request due to an error in our request' },
    });
    const noManager = await api('PATCH', `${secrets}/patched`, secret('patched'), APPLY);
    expect(noManager.body).toMatchObject({
      code: 422,
      message: 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
    });
    expect((await api('PATCH', `${secrets}/patched?force=true`, {}, 'application/merge-patch+json')).body).toMatchObject({
      code: 422,
      message: 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch',
    });
    expect((await api('PATCH', `${secrets}/patched`, {}, 'text/plain')).body).toMatchObject({
      code: 415,
      reason: 'UnsupportedMediaType',
      message:
        'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml',
    });
    expect((await api('PATCH', `${secrets}/absent`, {}, 'application/merge-patch+json')).body).toMatchObject({
      code: 404,
      message: 'secrets "absent" not found',
    });
    const renamed = await api('PATCH', `${secrets}/patched`, { metadata: { name: 'other' } }, 'application/merge-patch+json');
    expect(renamed.body).toMatchObject({
      code: 400,
      message: 'the name of the object (other) does not match the name on the URL (patched)',
    });
    expect((await api('POST', `${secrets}/patched`, secret('patched'))).body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'the server does not allow this method on the requested resource',
      reason: 'MethodNotAllowed',
      details: {},
      code: 405,
    });
    // Every write but the refused ones went to the stored object, each with a new resourceVersion.
    expect(Number(meta(jsonPatched.body).resourceVersion)).toBeGreaterThan(Number(meta(merged.body).resourceVersion));
  });

  it('deletes with preconditions, answers a Status, and lets finalizers hold an object', async () => {
    const created = (await api('POST', secrets, secret('doomed'))).body;
    const wrongUid = await api('DELETE', `${secrets}/doomed`, { preconditions: { uid: 'not-the-uid' } });
    expect(wrongUid.body).toMatchObject({
      code: 409,
      reason: 'Conflict',
      message: `Operation cannot be fulfilled on secrets "doomed": Precondition failed: UID in precondition: not-the-uid, UID in object meta: ${String(meta(created).uid)}`,
    });
    const deleted = await api('DELETE', `${secrets}/doomed`, { preconditions: { resourceVersion: meta(created).resourceVersion } });
    expect(deleted).toMatchObject({
      status: 200,
      body: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Success',
        details: { name: 'doomed', kind: 'secrets', uid: meta(created).uid },
      },
    });
    expect((await api('GET', `${secrets}/doomed`)).status).toBe(404);

    await api('POST', secrets, secret('held', { metadata: { name: 'held', finalizers: ['example.com/cleanup'] } }));
    const marked = await api('DELETE', `${secrets}/held`);
    expect(meta(marked.body).deletionTimestamp).toEqual(expect.any(String));
    expect((await api('GET', `${secrets}/held`)).status).toBe(200);
    await api('PATCH', `${secrets}/held`, { metadata: { finalizers: null } }, 'application/merge-patch+json');
    expect((await api('GET', `${secrets}/held`)).status).toBe(404);
  });

  it('counts generations of workloads, keeps their status, and defaults them', async () => {
    const deployment = (replicas: number, annotations: Json = {}) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'api', annotations },
      spec: {
        replicas,
        selector: { matchLabels: { app: 'api' } },
        template: {
          metadata: { labels: { app: 'api' } },
          spec: { containers: [{ name: 'api', image: 'example/api:1', ports: [{ containerPort: 80 }] }] },
        },
      },
      status: { replicas: 99 },
    });
    const created = await api('PATCH', `${deployments}/api?fieldManager=ci`, deployment(1), APPLY);
    expect(created.status).toBe(201);
    expect(meta(created.body).generation).toBe(1);
    expect(created.body.status).toEqual({});
    expect(created.body.spec).toMatchObject({
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      revisionHistoryLimit: 10,
    });
    const container = ((((created.body.spec as Json).template as Json).spec as Json).containers as Json[])[0]!;
    expect(container).toMatchObject({ imagePullPolicy: 'IfNotPresent', ports: [{ containerPort: 80, protocol: 'TCP' }] });
    expect(fieldsOf(created.body, 'ci')).not.toHaveProperty('f:status');

    const paused = await api('PATCH', `${deployments}/api`, { spec: { paused: true } }, 'application/strategic-merge-patch+json');
    expect(meta(paused.body).generation).toBe(2);
    expect((paused.body.spec as Json).paused).toBe(true);
    const annotated = await api(
      'PATCH',
      `${deployments}/api`,
      { metadata: { annotations: { note: 'x' } } },
      'application/merge-patch+json',
    );
    expect(meta(annotated.body).generation).toBe(3);
    const relabelled = await api('PATCH', `${deployments}/api`, { metadata: { labels: { extra: 'y' } } }, 'application/merge-patch+json');
    expect(meta(relabelled.body).generation).toBe(3);

    const moved = await api(
      'PATCH',
      `${deployments}/api`,
      { spec: { selector: { matchLabels: { app: 'other' } } } },
      'application/merge-patch+json',
    );
    expect(moved.status).toBe(422);
    expect(((moved.body.details as Json).causes as Json[]).map((c) => c.field)).toEqual(['spec.selector', 'spec.template.metadata.labels']);
  });

  it('serves discovery in both forms, and OpenAPI v3 that tells kubectl the server validates fields', async () => {
    const aggregated = await api('GET', '/apis', undefined, JSON_TYPE, {
      accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json',
    });
    expect(aggregated.headers.get('content-type')).toBe('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    const apps = (aggregated.body.items as Json[]).find((i) => meta(i).name === 'apps')!;
    const resources = ((apps.versions as Json[])[0]!.resources as Json[]).map((r) => [r.resource, r.shortNames, r.scope]);
    expect(resources).toEqual([
      ['daemonsets', ['ds'], 'Namespaced'],
      ['deployments', ['deploy'], 'Namespaced'],
      ['statefulsets', ['sts'], 'Namespaced'],
    ]);

    expect((await api('GET', '/apis')).body).toMatchObject({
      kind: 'APIGroupList',
      groups: [
        { name: 'apps' },
        { name: 'coordination.k8s.io', preferredVersion: { groupVersion: 'coordination.k8s.io/v1', version: 'v1' } },
        { name: 'events.k8s.io' },
      ],
    });
    const core = (await api('GET', '/api/v1')).body;
    expect(core).not.toHaveProperty('apiVersion');
    expect((core.resources as Json[]).map((r) => [r.name, r.namespaced, r.verbs])).toEqual([
      ['namespaces', false, ['get', 'list']],
      ['secrets', true, ['create', 'delete', 'get', 'list', 'patch', 'update']],
      ['events', true, ['get', 'list']],
    ]);

    const root = (await api('GET', '/openapi/v3')).body.paths as Record<string, { serverRelativeURL: string }>;
    expect(Object.keys(root)).toEqual(['api/v1', 'apis/apps/v1', 'apis/coordination.k8s.io/v1', 'apis/events.k8s.io/v1']);
    const document = (await api('GET', root['apis/coordination.k8s.io/v1']!.serverRelativeURL)).body;
    const patch = ((document.paths as Json)['/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}'] as Json).patch as Json;
    expect(patch['x-kubernetes-group-version-kind']).toEqual({ group: 'coordination.k8s.io', version: 'v1', kind: 'Lease' });
    expect((patch.parameters as Json[]).map((p) => p.name)).toContain('fieldValidation');
  });

  it('lists with selectors and pages, and refuses malformed selectors', async () => {
    for (const name of ['page-a', 'page-b', 'page-c']) {
      await api(
        'POST',
        '/api/v1/namespaces/ci/secrets',
        secret(name, { metadata: { name, labels: { page: 'yes' } }, type: name === 'page-b' ? 'example.com/b' : 'Opaque' }),
      );
    }
    const list = (query: string) => api('GET', `/api/v1/namespaces/ci/secrets?${query}`);
    const first = await list('labelSelector=page%3Dyes&limit=2');
    expect(first.body).toMatchObject({ kind: 'SecretList', apiVersion: 'v1' });
    expect((first.body.items as Json[]).map((i) => meta(i).name)).toEqual(['page-a', 'page-b']);
    expect((first.body.items as Json[])[0]).not.toHaveProperty('kind');
    const rest = await list(`labelSelector=page%3Dyes&limit=2&continue=${String(meta(first.body).continue)}`);
    expect((rest.body.items as Json[]).map((i) => meta(i).name)).toEqual(['page-c']);
    expect(meta(rest.body).continue).toBeUndefined();
    expect(((await list('fieldSelector=type%3Dexample.com%2Fb')).body.items as Json[]).map((i) => meta(i).name)).toEqual(['page-b']);
    expect(((await api('GET', '/api/v1/secrets?labelSelector=page')).body.items as Json[]).length).toBe(3);
    expect((await list('labelSelector=page%20in%20')).body).toMatchObject({ code: 400, reason: 'BadRequest' });
    expect((await list('fieldSelector=spec.x%3D1')).body).toMatchObject({ code: 400, message: 'field label not supported: spec.x' });
  });

  it('presents over TLS the CA it publishes, and never records a request body', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const url = new URL(`${double.httpsUrl}/api/v1/namespaces/default/secrets`);
      request(url, { ca: double.ca, headers: { authorization: `Bearer ${double.token}` } }, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      })
        .on('error', reject)
        .end();
    });
    expect(status).toBe(200);
    await api('POST', secrets, secret('canary', { stringData: { value: 'canary-secret-value-0421' } }));
    expect(JSON.stringify(double.requests)).not.toContain('canary-secret-value-0421');
    expect(double.requests.at(-1)).toEqual({
      method: 'POST',
      verb: 'create',
      path: secrets,
      query: {},
      contentType: JSON_TYPE,
      status: 201,
    });
  });

  it('forbids what it is told to, as RBAC answers: 403 with the Status the API server gives, before the handler', async () => {
    await api('POST', '/api/v1/namespaces/ci/secrets', secret('readable', { stringData: { token: 'x' } }));
    double.forbidden.push({ verb: 'list', resource: 'secrets', namespace: 'ci' }, { verb: 'get', resource: 'leases' });
    try {
      const listed = await api('GET', '/api/v1/namespaces/ci/secrets?labelSelector=a%3Db');
      expect(listed.status).toBe(403);
      expect(listed.body).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'secrets is forbidden: User "token-rotator-double" cannot list resource "secrets" in API group "" in the namespace "ci"',
        reason: 'Forbidden',
        details: { kind: 'secrets' },
        code: 403,
      });
      // Only the verb and the namespace named: a get of the same Secret, a list elsewhere, pass.
      expect((await api('GET', '/api/v1/namespaces/ci/secrets/readable')).status).toBe(200);
      expect((await api('GET', secrets)).status).toBe(200);
      // A named object is quoted, and a missing one is forbidden all the same (authorization comes first).
      const lease = await api('GET', `${leases}/nowhere`);
      expect(lease.status).toBe(403);
      expect(lease.body).toMatchObject({
        message:
          'leases.coordination.k8s.io "nowhere" is forbidden: User "token-rotator-double" cannot get resource "leases" in API group "coordination.k8s.io" in the namespace "default"',
        details: { name: 'nowhere', group: 'coordination.k8s.io', kind: 'leases' },
      });
    } finally {
      double.forbidden.length = 0;
    }
    expect((await api('GET', '/api/v1/namespaces/ci/secrets')).status).toBe(200);
  });

  it('authorizes an apply or a PUT that creates as create too, after validation, dry run or not; an update needs no create', async () => {
    const applyTo = (name: string, query = '') =>
      api('PATCH', `${secrets}/${name}?fieldManager=token-rotator${query}`, secret(name, { data: { token: b64('t') } }), APPLY);
    await applyTo('applied-before');
    double.forbidden.push({ verb: 'create', resource: 'secrets' }, { verb: 'create', resource: 'leases' });
    try {
      // errors.NewForbidden with RBAC's empty reason: no user, no verb, the colon kept.
      const refused = {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'secrets "created-by-apply" is forbidden: ',
        reason: 'Forbidden',
        details: { name: 'created-by-apply', kind: 'secrets' },
        code: 403,
      };
      expect(await applyTo('created-by-apply')).toMatchObject({ status: 403, body: refused });
      expect(await applyTo('created-by-apply', '&dryRun=All')).toMatchObject({ status: 403, body: refused });
      expect(double.objects.get('secrets', 'default', 'created-by-apply')).toBeUndefined();
      // Validation comes first: an invalid new object is Invalid, not Forbidden.
      const invalidKey = await api('PATCH', `${secrets}/bad-key?fieldManager=m`, secret('bad-key', { data: { 'a/b': b64('x') } }), APPLY);
      expect(invalidKey.status).toBe(422);
      // The object exists: the apply updates it, and patch is all it needs.
      expect((await applyTo('applied-before')).status).toBe(200);
      const leasePut = await api('PUT', `${leases}/created-by-put`, {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: 'created-by-put' },
        spec: { holderIdentity: 'a' },
      });
      expect(leasePut.body).toMatchObject({
        code: 403,
        message: 'leases.coordination.k8s.io "created-by-put" is forbidden: ',
        details: { name: 'created-by-put', group: 'coordination.k8s.io', kind: 'leases' },
      });
    } finally {
      double.forbidden.length = 0;
    }
    expect((await applyTo('created-by-apply')).status).toBe(201);
  });

  it('authorizes as RBAC when given Roles and bindings: resourceNames, the binding namespace, create by name only on apply', async () => {
    const ci = '/api/v1/namespaces/ci/secrets';
    await api('POST', ci, secret('granted', { stringData: { token: 'x' } }));
    await api('POST', ci, secret('other', { stringData: { token: 'y' } }));
    const role = (namespace: string, rules: JsonObject[]): JsonObject => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'r', namespace },
      rules,
    });
    const binding = (namespace: string, subject: JsonObject): JsonObject => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'r', namespace },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' },
      subjects: [subject],
    });
    const me = { kind: 'User', name: 'token-rotator-double' };
    double.rbac = [
      role('ci', [
        { apiGroups: [''], resources: ['secrets'], resourceNames: ['granted', 'made-by-apply'], verbs: ['get', 'list', 'patch', 'create'] },
      ]),
      binding('ci', me),
      // Bound to someone else, and a Role of another namespace: neither grants anything here.
      role('default', [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }]),
      binding('default', { kind: 'ServiceAccount', name: 'someone', namespace: 'default' }),
    ];
    try {
      const status = async (method: string, path: string, body?: unknown, type?: string) => (await api(method, path, body, type)).status;
      expect(await status('GET', `${ci}/granted`)).toBe(200);
      expect(await api('GET', `${ci}/other`)).toMatchObject({
        status: 403,
        body: {
          message:
            'secrets "other" is forbidden: User "token-rotator-double" cannot get resource "secrets" in API group "" in the namespace "ci"',
        },
      });
      // A list is about a name only when a field selector asks for exactly that name.
      expect(await status('GET', ci)).toBe(403);
      expect(await status('GET', `${ci}?fieldSelector=metadata.name%3Dgranted`)).toBe(200);
      expect(await status('GET', `${ci}?fieldSelector=metadata.name%3Dother`)).toBe(403);
      // A POST names no object: a create rule with resourceNames never allows it.
      expect(await status('POST', ci, secret('made-by-apply'))).toBe(403);
      // An apply that creates is authorized as create of its own name: allowed for a granted name only.
      const apply = (name: string) =>
        api('PATCH', `${ci}/${name}?fieldManager=token-rotator`, { ...secret(name), data: { token: b64('t') } }, APPLY);
      expect((await apply('made-by-apply')).status).toBe(201);
      expect(await apply('not-granted')).toMatchObject({
        status: 403,
        body: { message: expect.stringContaining('"not-granted" is forbidden') },
      });
      expect(await status('GET', `${secrets}/anything`)).toBe(403);
      expect(await status('GET', '/api/v1/namespaces/ci')).toBe(403);
      // A ServiceAccount subject is its user, and a ClusterRoleBinding grants everywhere.
      double.rbac = [
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRole',
          metadata: { name: 'reader' },
          rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }],
        },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRoleBinding',
          metadata: { name: 'reader' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'reader' },
          subjects: [{ kind: 'Group', name: 'system:authenticated' }],
        },
      ];
      expect(await status('GET', `${ci}/other`)).toBe(200);
      expect(await status('GET', `${secrets}/missing`)).toBe(404);
      expect(await status('GET', ci)).toBe(403);
    } finally {
      double.rbac = undefined;
    }
    expect((await api('GET', ci)).status).toBe(200);
  });

  it('runs a dry run through admission and validation and stores nothing: a missing namespace, an immutable Secret', async () => {
    const missing = await api(
      'PATCH',
      '/api/v1/namespaces/appz/secrets/x?fieldManager=m&dryRun=All',
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x', namespace: 'appz' }, data: { token: b64('t') } },
      APPLY,
    );
    expect(missing).toMatchObject({
      status: 404,
      body: {
        status: 'Failure',
        reason: 'NotFound',
        message: 'namespaces "appz" not found',
        details: { name: 'appz', kind: 'namespaces' },
        code: 404,
      },
    });
    const frozen = double.objects.put(secret('frozen', { immutable: true, data: { token: b64('old') } }));
    const changed = await api(
      'PATCH',
      `${secrets}/frozen?fieldManager=m&force=true&dryRun=All`,
      secret('frozen', { data: { token: b64('new') } }),
      APPLY,
    );
    expect(changed).toMatchObject({
      status: 422,
      body: {
        reason: 'Invalid',
        message: 'Secret "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set',
        details: { name: 'frozen', kind: 'Secret', causes: [{ reason: 'FieldValueForbidden', field: 'data' }] },
      },
    });
    const stored = double.objects.list('secrets', 'default').length;
    const created = await api('PATCH', `${secrets}/dry?fieldManager=m&dryRun=All`, secret('dry', { data: { token: b64('t') } }), APPLY);
    expect(created.status).toBe(201);
    expect(double.objects.get('secrets', 'default', 'dry')).toBeUndefined();
    expect(double.objects.list('secrets', 'default')).toHaveLength(stored);
    expect(double.objects.get('secrets', 'default', 'frozen')).toEqual(frozen);
  });

  it('logs each request with its Kubernetes verb, so a list tells from a get', async () => {
    const before = double.requests.length;
    await api('GET', '/api/v1/namespaces/ci/secrets?labelSelector=app.kubernetes.io%2Fmanaged-by%3Dtoken-rotator');
    await api('GET', '/api/v1/namespaces/ci/secrets/readable');
    await api('GET', '/version');
    expect(double.requests.slice(before).map((r) => [r.method, r.verb])).toEqual([
      ['GET', 'list'],
      ['GET', 'get'],
      ['GET', 'get'],
    ]);
    expect(double.requests[before]!.query).toEqual({ labelSelector: 'app.kubernetes.io/managed-by=token-rotator' });
  });
});

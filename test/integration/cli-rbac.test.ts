import { readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

import { run } from '../../src/cli/run.js';
import { JOURNAL_INDEX_NAME, leaseObjectName, stateObjectName } from '../../src/kubernetes/rotator-objects.js';
import { writePolicy } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const schema = JSON.parse(await readFile(resolve(import.meta.dirname, '../../schema/output.schema.json'), 'utf8')) as object;
const validateEnvelope = new Ajv2020({ allErrors: true, strict: true }).compile(schema);

interface Rule {
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
  verbs: string[];
}
interface RbacObject {
  kind: string;
  metadata: { name: string; namespace: string };
  rules?: Rule[];
  roleRef?: { name: string };
  subjects?: unknown[];
}

let dir: string;
beforeEach(async () => {
  dir = await makeTempDir();
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The CLI in-process: `rbac` reads the policy and the environment only. */
async function rbac(args: string[], env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await run(['rbac', '--config', 'rotation.yaml', ...args], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    // No kubeconfig here: the namespace comes from --namespace, or nowhere.
    env: { HOME: dir, KUBECONFIG: join(dir, 'no-kubeconfig'), ...env },
    cwd: dir,
  });
  return { code, stdout, stderr };
}

const roleIn = (objects: RbacObject[], namespace: string, name: string) =>
  objects.find((o) => o.kind === 'Role' && o.metadata.namespace === namespace && o.metadata.name === name);

/** The rule for Kubernetes Events: create, and patch of a repeated one's series (never restricted by name). */
const EVENTS = { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] };

describe('token-rotator rbac', () => {
  const policy = {
    version: 1,
    tokens: [
      {
        name: 'Ingest_Prod.v2',
        id: 'tok-1',
        sinks: [
          { type: 'kubernetes-secret', name: 'ingest-token', namespace: 'apps' },
          { type: 'kubernetes-secret', name: 'ingest-copy' }, // no namespace: the rotator's own
          { type: 'file', path: 'ingest.token' },
        ],
        reload: [
          { type: 'rollout', name: 'ingest-api', namespace: 'apps' },
          { type: 'rollout', kind: 'StatefulSet', name: 'ingest-db', namespace: 'apps' },
          { type: 'rollout', kind: 'DaemonSet', selector: { tier: 'edge' }, namespace: 'edge' },
        ],
      },
      {
        name: 'query',
        id: 'tok-2',
        sinks: [{ type: 'kubernetes-secret', name: 'query-token', namespace: 'apps' }],
        reload: [{ type: 'webhook', urlFrom: 'RELOAD_URL' }], // a variable the pod has, not needed here
      },
    ],
  };

  it('grants the state objects named as the backend names them, each sink Secret and workload by name, and list only for a selector', async () => {
    await writePolicy(dir, policy);
    const result = await rbac(['--namespace', 'rotator', '--service-account', 'ingest-rotator'], {
      ROTATOR_STATE_BACKEND: 'kubernetes',
      ROTATOR_STATE_NAMESPACE: 'rotator-state',
    });
    expect(result.code, result.stderr).toBe(0);
    const objects = parseAllDocuments(result.stdout).map((d) => d.toJS() as RbacObject);
    expect(objects.map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`)).toEqual([
      'Role rotator-state/ingest-rotator-state',
      'RoleBinding rotator-state/ingest-rotator-state',
      'Role apps/ingest-rotator-deliver',
      'RoleBinding apps/ingest-rotator-deliver',
      'Role edge/ingest-rotator-deliver',
      'RoleBinding edge/ingest-rotator-deliver',
      'Role rotator/ingest-rotator-deliver',
      'RoleBinding rotator/ingest-rotator-deliver',
    ]);
    const names = ['Ingest_Prod.v2', 'query'];
    expect(roleIn(objects, 'rotator-state', 'ingest-rotator-state')!.rules).toEqual([
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
      { apiGroups: [''], resources: ['secrets'], resourceNames: names.map(stateObjectName).sort(), verbs: ['get', 'update', 'delete'] },
      { apiGroups: [''], resources: ['secrets'], resourceNames: [JOURNAL_INDEX_NAME], verbs: ['get', 'update'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: names.map(leaseObjectName).sort(),
        verbs: ['get', 'update'],
      },
    ]);
    expect(roleIn(objects, 'apps', 'ingest-rotator-deliver')!.rules).toEqual([
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['ingest-token', 'query-token'], verbs: ['get', 'create', 'patch'] },
      { apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['ingest-api'], verbs: ['get', 'patch'] },
      { apiGroups: ['apps'], resources: ['statefulsets'], resourceNames: ['ingest-db'], verbs: ['get', 'patch'] },
      EVENTS,
    ]);
    expect(roleIn(objects, 'edge', 'ingest-rotator-deliver')!.rules).toEqual([
      { apiGroups: ['apps'], resources: ['daemonsets'], verbs: ['get', 'list', 'patch'] },
      EVENTS,
    ]);
    // The sink that names no namespace is in the rotator's, as in its pod, whatever this machine's kubeconfig says.
    expect(roleIn(objects, 'rotator', 'ingest-rotator-deliver')!.rules).toEqual([
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['ingest-copy'], verbs: ['get', 'create', 'patch'] },
      EVENTS,
    ]);
    for (const binding of objects.filter((o) => o.kind === 'RoleBinding')) {
      expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: binding.metadata.name });
      expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'ingest-rotator', namespace: 'rotator' }]);
    }
    // Every rule says why, in a comment above it.
    expect(result.stdout.match(/^ {2}# \S/gm)!.length).toBeGreaterThanOrEqual(9);
  });

  it('grants the Kubernetes Events where the sinks and reloads are, unless ROTATOR_KUBERNETES_EVENTS=off', async () => {
    await writePolicy(dir, policy);
    const off = await rbac(['--namespace', 'rotator'], { ROTATOR_KUBERNETES_EVENTS: 'off' });
    expect(off.code, off.stderr).toBe(0);
    const rules = parseAllDocuments(off.stdout)
      .map((d) => d.toJS() as RbacObject)
      .flatMap((o) => (o.kind === 'Role' ? (o.rules as unknown[]) : []));
    expect(rules).not.toContainEqual(EVENTS);
    const wrong = await rbac(['--namespace', 'rotator'], { ROTATOR_KUBERNETES_EVENTS: 'no' });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('env.ROTATOR_KUBERNETES_EVENTS');
  });

  it('prints the versioned envelope with --json, the objects as items', async () => {
    await writePolicy(dir, policy);
    const result = await rbac(['--namespace', 'rotator', '--json'], { ROTATOR_STATE_BACKEND: 'kubernetes' });
    expect(result.code, result.stderr).toBe(0);
    const envelope = JSON.parse(result.stdout) as { kind: string; summary: unknown; items: RbacObject[] };
    expect(validateEnvelope(envelope), JSON.stringify(validateEnvelope.errors, null, 2)).toBe(true);
    expect(envelope).toMatchObject({
      kind: 'Rbac',
      summary: {
        serviceAccount: 'rotator/token-rotator',
        stateBackend: 'kubernetes',
        stateNamespace: 'rotator',
        namespaces: ['rotator', 'apps', 'edge'],
        needsAttention: 0,
      },
    });
    expect((envelope.summary as { total: number }).total).toBe(envelope.items.length);
    const yaml = parseAllDocuments((await rbac(['--namespace', 'rotator'], { ROTATOR_STATE_BACKEND: 'kubernetes' })).stdout).map((d) =>
      d.toJS(),
    );
    expect(envelope.items).toEqual(yaml);
  });

  it('grants no state access with the file backend, and says when there is nothing to grant at all', async () => {
    await writePolicy(dir, policy);
    const objects = parseAllDocuments((await rbac(['--namespace', 'rotator'])).stdout).map((d) => d.toJS() as RbacObject);
    expect(objects.some((o) => o.metadata.name === 'token-rotator-state')).toBe(false);
    await writePolicy(dir, { version: 1, tokens: [{ name: 'a', id: 'a1', sinks: [{ type: 'file', path: 'a.token' }] }] });
    const nothing = await rbac(['--namespace', 'rotator']);
    expect(nothing).toMatchObject({ code: 0, stdout: expect.stringMatching(/^# Nothing to grant/) });
  });

  it('refuses a policy or options the rotator would refuse: exit 2, every problem named', async () => {
    await writeFile(
      join(dir, 'rotation.yaml'),
      'version: 1\ntokens:\n  - name: a\n    id: a1\n    sinks:\n      - { type: kubernetes-secret, name: token-rotator-state-a-0123456789 }\n',
    );
    const result = await rbac(['--namespace', 'Not_A_Namespace', '--service-account', 'Bad_Name'], { ROTATOR_STATE_BACKEND: 'nowhere' });
    expect(result.code).toBe(2);
    for (const problem of [
      '--namespace: must be a namespace name',
      '--service-account: must be a ServiceAccount name',
      'env.ROTATOR_STATE_BACKEND: must be one of: file, kubernetes',
      'tokens[0].sinks[0].name: is reserved',
    ]) {
      expect(result.stderr).toContain(problem);
    }
    expect(result.stdout).toBe('');
    // Not in a cluster, no kubeconfig, no --namespace: whose namespace would it be?
    const unknown = await rbac([]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(
      "--namespace: required here: not in a cluster, and no kubeconfig context to take the rotator's namespace from",
    );
  });
});

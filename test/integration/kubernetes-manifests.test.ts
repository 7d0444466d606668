import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';

import { run } from '../../src/cli/run.js';
import { VARIABLES } from '../../src/config/env.js';
import { parsePolicy } from '../../src/config/load-policy.js';
import { JOURNAL_INDEX_NAME, leaseObjectName, stateObjectName } from '../../src/kubernetes/rotator-objects.js';
import { modelProblems } from '../helpers/kubernetes-models.js';
import {
  allContainers,
  type Container,
  idOf,
  type K8sObject,
  type PodSpec,
  renderKustomization,
  type SecurityContext,
  workloads,
} from '../helpers/kustomize.js';

/**
 * The Kubernetes examples as users apply them: each overlay rendered by the real `kubectl kustomize`
 * (kustomize as kubectl embeds it), then checked object by object. Nothing here talks to a cluster.
 */

const root = resolve(import.meta.dirname, '../..');
const kubernetesDir = resolve(root, 'config/kubernetes');

interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

const OVERLAYS = ['cronjob', 'deployment', 'sidecar'] as const;
type Overlay = (typeof OVERLAYS)[number];

const ROTATOR_NAMESPACE = 'token-rotator';
const APP_NAMESPACE = 'apps';
const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/**
 * What the examples refer to without defining: each one on purpose, with why. Anything else a
 * manifest names must be in the rendered output.
 */
const EXTERNAL: Record<string, string> = {
  'Namespace /token-rotator': 'config/kubernetes/namespace, applied first and apart, so that deleting an overlay keeps the state',
  'Namespace /apps': "the app's namespace",
  'ConfigMap apps/kube-root-ca.crt': "published by Kubernetes in every namespace: the cluster's CA, for the sidecar's projected token",
  'Secret apps/ingest-api-token': 'written by the kubernetes-secret sink (RBAC resourceNames)',
  'Deployment apps/ingest-api': 'the app that the rollout reload restarts (RBAC resourceNames)',
  // The state of the policies' one token, in the rotator's namespace: created by the rotator itself.
  ...Object.fromEntries(
    [ROTATOR_NAMESPACE, APP_NAMESPACE].flatMap((namespace) => [
      [`Secret ${namespace}/${stateObjectName('ingest-api')}`, "the token's state Secret (RBAC resourceNames)"],
      [`Secret ${namespace}/${JOURNAL_INDEX_NAME}`, 'the journal index of the state (RBAC resourceNames)'],
      [`Lease ${namespace}/${leaseObjectName('ingest-api')}`, "the token's Lease (RBAC resourceNames)"],
    ]),
  ),
};

/** Every object of each overlay: kind namespace/name, generated names without their hash. */
const EXPECTED_OBJECTS: Record<Overlay, string[]> = {
  cronjob: [
    'ConfigMap token-rotator/token-rotator-policy',
    'CronJob token-rotator/token-rotator',
    'Role apps/token-rotator-deliver',
    'Role token-rotator/token-rotator-state',
    'RoleBinding apps/token-rotator-deliver',
    'RoleBinding token-rotator/token-rotator-state',
    'Secret token-rotator/token-rotator-credentials',
    'ServiceAccount token-rotator/token-rotator',
  ],
  deployment: [
    'ConfigMap token-rotator/token-rotator-policy',
    'Deployment token-rotator/token-rotator',
    'PodDisruptionBudget token-rotator/token-rotator',
    'Role apps/token-rotator-deliver',
    'Role token-rotator/token-rotator-state',
    'RoleBinding apps/token-rotator-deliver',
    'RoleBinding token-rotator/token-rotator-state',
    'Secret token-rotator/token-rotator-credentials',
    'Service token-rotator/token-rotator-metrics',
    'ServiceAccount token-rotator/token-rotator',
  ],
  sidecar: [
    'ConfigMap apps/token-rotator-policy',
    'Deployment apps/ingest-api',
    'Role apps/token-rotator-state',
    'RoleBinding apps/token-rotator-state',
    'Secret apps/token-rotator-credentials',
    'ServiceAccount apps/token-rotator',
  ],
};

/** Where each overlay's policy comes from. */
const POLICY_FILES: Record<Overlay, string> = {
  cronjob: 'config/kubernetes/policy/rotation.yaml',
  deployment: 'config/kubernetes/policy/rotation.yaml',
  sidecar: 'config/kubernetes/overlays/sidecar/rotation.yaml',
};

/** The Roles each overlay carries, as `token-rotator rbac` printed them, and the rotator's namespace they were printed for. */
const RBAC: Record<Overlay, { file: string; namespace: string }> = {
  cronjob: { file: 'config/kubernetes/policy/rbac.yaml', namespace: ROTATOR_NAMESPACE },
  deployment: { file: 'config/kubernetes/policy/rbac.yaml', namespace: ROTATOR_NAMESPACE },
  sidecar: { file: 'config/kubernetes/overlays/sidecar/rbac.yaml', namespace: APP_NAMESPACE },
};

/** Events are named when created (`<object>.<time>`): their patch (a series) cannot be granted by name in advance. */
const isEventsRule = (rule: PolicyRule) => rule.apiGroups.join() === 'events.k8s.io' && rule.resources.join() === 'events';

/** Verbs that Kubernetes can restrict by resourceNames (create and deletecollection never; list and watch only with a name field selector). */
const NAMEABLE_VERBS = new Set(['get', 'update', 'patch', 'delete']);

/** What `token-rotator rbac` prints for an overlay's policy, run as the product (in-process, with the kubernetes state backend). */
async function printedRbac(overlay: Overlay): Promise<string> {
  let stdout = '';
  let stderr = '';
  const code = await run(['rbac', '--config', POLICY_FILES[overlay], '--namespace', RBAC[overlay].namespace], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: { ROTATOR_STATE_BACKEND: 'kubernetes', HOME: root },
    cwd: root,
  });
  expect(code, stderr).toBe(0);
  return stdout;
}

const render = (overlay: Overlay) => renderKustomization(resolve(kubernetesDir, 'overlays', overlay));

const GENERATED_KINDS = new Set(['ConfigMap', 'Secret']);
/** A generated ConfigMap or Secret carries a 10-character hash of its content after its name. */
const baseName = (object: K8sObject) =>
  GENERATED_KINDS.has(object.kind) ? object.metadata.name.replace(/-[a-z0-9]{10}$/, '') : object.metadata.name;
const id = (kind: string, namespace: string, name: string) => `${kind} ${namespace}/${name}`;

const rotatorContainer = (spec: PodSpec) => allContainers(spec).find((c) => c.name === 'token-rotator');
const envValue = (container: Container, name: string) => container.env?.find((e) => e.name === name)?.value;
const data = (object: K8sObject) => ({ ...(object.data as Record<string, string>), ...(object.stringData as Record<string, string>) });

/** The container's effective security settings: its own, else the pod's. */
function effectiveSecurity(pod: PodSpec, container: Container): SecurityContext {
  return { ...pod.securityContext, ...container.securityContext };
}

/** Which file of which volume a path in the container is, if it is inside a mount. */
function fileInVolume(container: Container, path: string): { volume: string; file: string } | undefined {
  const mount = container.volumeMounts?.find((m) => path.startsWith(`${m.mountPath.replace(/\/$/, '')}/`));
  return mount ? { volume: mount.name, file: path.slice(mount.mountPath.replace(/\/$/, '').length + 1) } : undefined;
}

const rendered = new Map<Overlay, K8sObject[]>();
beforeAll(async () => {
  for (const overlay of OVERLAYS) rendered.set(overlay, await render(overlay));
});
const objectsOf = (overlay: Overlay) => rendered.get(overlay)!;

function find(objects: K8sObject[], kind: string, namespace: string, name: string): K8sObject | undefined {
  return objects.find((o) => o.kind === kind && (o.metadata.namespace ?? '') === namespace && o.metadata.name === name);
}

describe.each(OVERLAYS)('config/kubernetes/overlays/%s rendered by kubectl kustomize', (overlay) => {
  it('holds exactly the expected objects, every one namespaced, and no template left over', () => {
    const objects = objectsOf(overlay);
    const found = objects.map((o) => id(o.kind, o.metadata.namespace ?? '', baseName(o))).sort();
    expect(found).toEqual([...EXPECTED_OBJECTS[overlay]].sort());
    for (const object of objects) expect(object.metadata.annotations?.['config.kubernetes.io/local-config'], idOf(object)).toBeUndefined();
  });

  it('holds only objects valid against the Kubernetes OpenAPI schemas (kubernetes-models), with no field they do not know', async () => {
    const problems: string[] = [];
    for (const object of objectsOf(overlay)) problems.push(...(await modelProblems(object)));
    expect(problems).toEqual([]);
  });

  it('gives its generated ConfigMap and Secret a content hash, and the pods the hashed names', () => {
    const objects = objectsOf(overlay);
    for (const object of objects.filter((o) => GENERATED_KINDS.has(o.kind))) expect(object.metadata.name).not.toBe(baseName(object));
  });

  it('resolves every reference of its pods to an object it defines, or to a documented external one', () => {
    const objects = objectsOf(overlay);
    const problems: string[] = [];
    const resolveRef = (kind: string, namespace: string, name: string, from: string) => {
      const object = find(objects, kind, namespace, name);
      if (!object && !(id(kind, namespace, name) in EXTERNAL)) problems.push(`${from}: ${id(kind, namespace, name)} is not defined`);
      return object;
    };
    const hasKey = (object: K8sObject | undefined, key: string, from: string) => {
      if (object && !(key in data(object))) problems.push(`${from}: ${idOf(object)} has no key ${key}`);
    };
    const pods = workloads(objects);
    expect(pods.length).toBeGreaterThan(0);
    for (const { object, namespace, template } of pods) {
      const at = idOf(object);
      const spec = template.spec;
      expect(spec.serviceAccountName, `${at}: serviceAccountName`).toBe('token-rotator');
      resolveRef('ServiceAccount', namespace, spec.serviceAccountName!, `${at} serviceAccountName`);
      const volumes = new Map((spec.volumes ?? []).map((v) => [v.name, v]));
      for (const volume of spec.volumes ?? []) {
        if (volume.configMap) {
          const target = resolveRef('ConfigMap', namespace, volume.configMap.name, `${at} volume ${volume.name}`);
          for (const item of volume.configMap.items ?? []) hasKey(target, item.key, `${at} volume ${volume.name}`);
        }
        if (volume.secret) {
          const target = resolveRef('Secret', namespace, volume.secret.secretName, `${at} volume ${volume.name}`);
          for (const item of volume.secret.items ?? []) hasKey(target, item.key, `${at} volume ${volume.name}`);
        }
        if (volume.persistentVolumeClaim)
          resolveRef('PersistentVolumeClaim', namespace, volume.persistentVolumeClaim.claimName, `${at} volume ${volume.name}`);
        for (const source of volume.projected?.sources ?? []) {
          if (source.configMap) resolveRef('ConfigMap', namespace, source.configMap.name, `${at} volume ${volume.name}`);
          if (source.secret) resolveRef('Secret', namespace, source.secret.name, `${at} volume ${volume.name}`);
        }
      }
      for (const container of allContainers(spec)) {
        const where = `${at} container ${container.name}`;
        for (const mount of container.volumeMounts ?? [])
          if (!volumes.has(mount.name)) problems.push(`${where}: mounts volume ${mount.name}, which the pod does not define`);
        for (const env of container.env ?? []) {
          const secretRef = env.valueFrom?.secretKeyRef;
          if (secretRef) hasKey(resolveRef('Secret', namespace, secretRef.name, where), secretRef.key, where);
          const configMapRef = env.valueFrom?.configMapKeyRef;
          if (configMapRef) hasKey(resolveRef('ConfigMap', namespace, configMapRef.name, where), configMapRef.key, where);
        }
        for (const from of container.envFrom ?? []) {
          if (from.secretRef) resolveRef('Secret', namespace, from.secretRef.name, where);
          if (from.configMapRef) resolveRef('ConfigMap', namespace, from.configMapRef.name, where);
        }
        // A file the rotator is told to read (ROTATOR_CONFIG, every *_FILE) must be a key of a mounted ConfigMap or Secret.
        for (const env of container.env ?? []) {
          if (!(env.name === 'ROTATOR_CONFIG' || env.name.endsWith('_FILE')) || env.value === undefined) continue;
          const file = fileInVolume(container, env.value);
          const volume = file && volumes.get(file.volume);
          if (!file || !volume) problems.push(`${where}: ${env.name}=${env.value} is on no mounted volume`);
          else if (volume.secret) hasKey(find(objects, 'Secret', namespace, volume.secret.secretName), file.file, `${where} ${env.name}`);
          else if (volume.configMap)
            hasKey(find(objects, 'ConfigMap', namespace, volume.configMap.name), file.file, `${where} ${env.name}`);
          else if (!volume.emptyDir)
            problems.push(`${where}: ${env.name} is on volume ${file.volume}, neither a ConfigMap, a Secret nor a shared emptyDir`);
        }
        const named = new Set((container.ports ?? []).map((p) => p.name));
        const numbered = new Set((container.ports ?? []).map((p) => p.containerPort));
        for (const [kind, probe] of Object.entries({
          liveness: container.livenessProbe,
          readiness: container.readinessProbe,
          startup: container.startupProbe,
        })) {
          const port = probe?.httpGet?.port;
          if (port !== undefined && !(typeof port === 'string' ? named.has(port) : numbered.has(port)))
            problems.push(`${where}: ${kind} probe port ${port} is not a port of the container`);
        }
      }
    }
    for (const binding of objects.filter((o) => o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding')) {
      const at = idOf(binding);
      const roleRef = binding.roleRef as { apiGroup: string; kind: string; name: string };
      expect(roleRef, `${at} roleRef`).toMatchObject({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role' });
      resolveRef('Role', binding.metadata.namespace ?? '', roleRef.name, `${at} roleRef`);
      const subjects = binding.subjects as Array<{ kind: string; name: string; namespace?: string }>;
      expect(subjects.length, `${at} subjects`).toBeGreaterThan(0);
      for (const subject of subjects) {
        expect(subject.kind, `${at} subject`).toBe('ServiceAccount');
        expect(subject.namespace, `${at} subject ${subject.name} names its namespace`).toBeTruthy();
        resolveRef('ServiceAccount', subject.namespace ?? '', subject.name, `${at} subject`);
      }
    }
    // Objects named by RBAC rules: rendered here, or documented (what the rotator writes or restarts).
    const KINDS: Record<string, string> = { secrets: 'Secret', deployments: 'Deployment', leases: 'Lease' };
    for (const role of objects.filter((o) => o.kind === 'Role'))
      for (const rule of role.rules as PolicyRule[])
        for (const name of rule.resourceNames ?? [])
          for (const resource of rule.resources)
            resolveRef(KINDS[resource] ?? resource, role.metadata.namespace ?? '', name, `${idOf(role)} resourceNames`);
    // Every namespace used is defined here or documented as the user's to create.
    for (const object of objects) {
      const namespace = object.metadata.namespace ?? '';
      if (!find(objects, 'Namespace', '', namespace) && !(id('Namespace', '', namespace) in EXTERNAL))
        problems.push(`${idOf(object)}: namespace ${namespace} is neither defined nor documented`);
    }
    expect(problems).toEqual([]);
  });

  it('grants exactly the least-privilege rules `token-rotator rbac` prints for its policy, each Role bound to the rotator alone', async () => {
    const objects = objectsOf(overlay);
    expect(objects.filter((o) => o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding')).toEqual([]);
    const printed = await printedRbac(overlay);
    // The file the overlay carries is the command's output, comments and all: print it again to update it.
    expect(readFileSync(resolve(root, RBAC[overlay].file), 'utf8'), `${RBAC[overlay].file} is what token-rotator rbac prints`).toBe(
      printed,
    );
    const rbacKinds = (list: K8sObject[]) =>
      list.filter((o) => o.kind === 'Role' || o.kind === 'RoleBinding').sort((a, b) => idOf(a).localeCompare(idOf(b)));
    expect(rbacKinds(objects)).toEqual(rbacKinds(parseAllDocuments(printed).map((d) => d.toJS() as K8sObject)));
    const roles = objects.filter((o) => o.kind === 'Role');
    const rotator = find(objects, 'ServiceAccount', overlay === 'sidecar' ? APP_NAMESPACE : ROTATOR_NAMESPACE, 'token-rotator')!;
    for (const role of roles) {
      const bindings = objects.filter(
        (o) =>
          o.kind === 'RoleBinding' &&
          o.metadata.namespace === role.metadata.namespace &&
          (o.roleRef as { name: string }).name === role.metadata.name,
      );
      expect(
        bindings.map((b) => b.subjects),
        idOf(role),
      ).toEqual([[{ kind: 'ServiceAccount', name: rotator.metadata.name, namespace: rotator.metadata.namespace }]]);
    }
  });

  it('lists nothing, so no Role reads a Secret it is not given by name (the state Role included)', () => {
    for (const role of objectsOf(overlay).filter((o) => o.kind === 'Role')) {
      for (const rule of role.rules as PolicyRule[]) {
        const where = `${idOf(role)} ${JSON.stringify(rule)}`;
        expect(rule.verbs, where).not.toContain('list');
        expect(rule.verbs, where).not.toContain('watch');
        // The one exception: the rotator patches only the Events it created, whose names it chose then.
        if (rule.verbs.some((v) => NAMEABLE_VERBS.has(v)) && !isEventsRule(rule))
          expect(rule.resourceNames, `${where}: not restricted by name`).toBeDefined();
      }
    }
  });

  it('uses no wildcard, and names resources wherever Kubernetes can restrict by name', () => {
    for (const role of objectsOf(overlay).filter((o) => o.kind === 'Role')) {
      for (const rule of role.rules as PolicyRule[]) {
        const where = `${idOf(role)} ${JSON.stringify(rule)}`;
        for (const field of [rule.apiGroups, rule.resources, rule.verbs, rule.resourceNames ?? []]) expect(field, where).not.toContain('*');
        expect(
          rule.resources.some((r) => r.includes('*') || r.includes('/')),
          where,
        ).toBe(false);
        if (rule.resourceNames) {
          // A list, or a create alone, with resourceNames authorizes nothing the rotator does (a POST names
          // no object): a silent denial. A create beside patch is the apply that creates a Secret, which
          // the API server authorizes as create of that name.
          const nameable = rule.verbs.every((v) => NAMEABLE_VERBS.has(v) || (v === 'create' && rule.verbs.includes('patch')));
          expect(nameable, `${where}: resourceNames with a verb that cannot be restricted by name`).toBe(true);
          expect(rule.resourceNames.length, where).toBeGreaterThan(0);
        }
      }
    }
  });

  it('lets the rotator do in apps only what its policy names: the sink Secrets and the reload workloads', () => {
    const objects = objectsOf(overlay);
    const policy = parse(policyText(objects)) as {
      tokens: Array<{ sinks: Array<Record<string, string>>; reload?: Array<Record<string, string>> }>;
      defaults?: { reload?: Array<Record<string, string>> };
    };
    const secrets = policy.tokens.flatMap((t) => t.sinks).filter((s) => s.type === 'kubernetes-secret');
    const rollouts = [...(policy.defaults?.reload ?? []), ...policy.tokens.flatMap((t) => t.reload ?? [])].filter(
      (r) => r.type === 'rollout',
    );
    const namespaced = (namespace: string | undefined) => namespace ?? (overlay === 'sidecar' ? APP_NAMESPACE : ROTATOR_NAMESPACE);
    const granted = (namespace: string, resource: string, verb: string) =>
      objects
        .filter((o) => o.kind === 'Role' && o.metadata.namespace === namespace)
        .flatMap((r) => r.rules as PolicyRule[])
        .filter((rule) => rule.resources.includes(resource) && rule.verbs.includes(verb))
        .flatMap((rule) => rule.resourceNames ?? ['(any)']);
    for (const sink of secrets) {
      const namespace = namespaced(sink.namespace);
      expect(granted(namespace, 'secrets', 'get'), `get secret ${namespace}/${sink.name}`).toContain(sink.name);
      expect(granted(namespace, 'secrets', 'patch'), `patch secret ${namespace}/${sink.name}`).toContain(sink.name);
      expect(granted(namespace, 'secrets', 'create'), `create secret ${namespace}/${sink.name} (the apply that creates it)`).toContain(
        sink.name,
      );
    }
    for (const rollout of rollouts) {
      const namespace = namespaced(rollout.namespace);
      const resource = `${rollout.kind!.toLowerCase()}s`;
      expect(granted(namespace, resource, 'get'), `get ${resource} ${namespace}/${rollout.name}`).toContain(rollout.name);
      expect(granted(namespace, resource, 'patch'), `patch ${resource} ${namespace}/${rollout.name}`).toContain(rollout.name);
    }
    // And nothing in apps beyond that: every name granted there is one the policy writes or restarts.
    const named = new Set([...secrets.map((s) => s.name), ...rollouts.map((r) => r.name)]);
    for (const role of objects.filter(
      (o) => o.kind === 'Role' && o.metadata.namespace === APP_NAMESPACE && o.metadata.name !== 'token-rotator-state',
    ))
      for (const rule of role.rules as PolicyRule[])
        for (const name of rule.resourceNames ?? []) expect(named, `${idOf(role)} names ${name}`).toContain(name);
    if (overlay === 'sidecar') expect(secrets.length + rollouts.length).toBe(0);
    else expect(secrets.length * rollouts.length).toBeGreaterThan(0);
  });

  it('runs no container as root, with a writable root filesystem, privileges or extra capabilities', () => {
    const pods = workloads(objectsOf(overlay));
    expect(pods.length).toBeGreaterThan(0);
    for (const { object, template } of pods) {
      for (const container of allContainers(template.spec)) {
        const where = `${idOf(object)} container ${container.name}`;
        const security = effectiveSecurity(template.spec, container);
        expect(security.runAsNonRoot, `${where}: runAsNonRoot`).toBe(true);
        expect(security.runAsUser, `${where}: a numeric non-root runAsUser`).toBeGreaterThan(0);
        expect(security.runAsGroup ?? 1, `${where}: runAsGroup`).toBeGreaterThan(0);
        expect(container.securityContext?.readOnlyRootFilesystem, `${where}: readOnlyRootFilesystem`).toBe(true);
        expect(container.securityContext?.allowPrivilegeEscalation, `${where}: allowPrivilegeEscalation`).toBe(false);
        expect(security.privileged ?? false, `${where}: privileged`).toBe(false);
        expect(container.securityContext?.capabilities?.drop, `${where}: drops all capabilities`).toEqual(['ALL']);
        expect(container.securityContext?.capabilities?.add ?? [], `${where}: adds none`).toEqual([]);
        expect(security.seccompProfile?.type, `${where}: seccomp`).toBe('RuntimeDefault');
        expect(container.resources?.limits?.memory, `${where}: a memory limit`).toBeTruthy();
        expect(container.resources?.requests?.cpu, `${where}: a cpu request`).toBeTruthy();
      }
      for (const volume of template.spec.volumes ?? []) expect(volume.hostPath, `${idOf(object)} volume ${volume.name}`).toBeUndefined();
    }
  });

  it("runs the rotator from the released image with the base's container settings", () => {
    const base = parse(readFileSync(resolve(kubernetesDir, 'base/container.yaml'), 'utf8')) as { spec: PodSpec };
    const settings = base.spec.containers[0]!;
    for (const { object, template } of workloads(objectsOf(overlay))) {
      const rotator = rotatorContainer(template.spec);
      expect(rotator, `${idOf(object)} runs token-rotator`).toBeDefined();
      expect(rotator!.image, idOf(object)).toMatch(/^ghcr\.io\/example\/token-rotator:\d+\.\d+\.\d+$/);
      expect(rotator!.securityContext, idOf(object)).toEqual(settings.securityContext);
      expect(rotator!.resources, idOf(object)).toEqual(settings.resources);
      expect(effectiveSecurity(template.spec, rotator!).runAsUser, 'the image user').toBe(1000);
    }
  });

  it('keeps its state in the Kubernetes API: backend, state key from a read-only Secret file, no state volume', () => {
    const objects = objectsOf(overlay);
    expect(objects.filter((o) => o.kind === 'PersistentVolumeClaim')).toEqual([]);
    for (const { object, template } of workloads(objects)) {
      const rotator = rotatorContainer(template.spec)!;
      expect(envValue(rotator, 'ROTATOR_STATE_BACKEND'), idOf(object)).toBe('kubernetes');
      expect(envValue(rotator, 'ROTATOR_STATE_DIR'), idOf(object)).toBeUndefined();
      for (const name of ['ROTATOR_STATE_KEY', 'ROTATOR_OAUTH_CLIENT_SECRET']) {
        expect(
          rotator.env?.find((e) => e.name === name),
          `${name} itself is never in the pod spec`,
        ).toBeUndefined();
        const path = envValue(rotator, `${name}_FILE`);
        expect(path, `${name}_FILE`).toBeDefined();
        const file = fileInVolume(rotator, path!)!;
        const volume = template.spec.volumes!.find((v) => v.name === file.volume)!;
        expect(volume.secret, `${name}_FILE is in a Secret volume`).toBeDefined();
        expect(rotator.volumeMounts!.find((m) => m.name === file.volume)!.readOnly, `${name}_FILE is mounted read-only`).toBe(true);
      }
      for (const volume of template.spec.volumes ?? [])
        expect(volume.persistentVolumeClaim, `${idOf(object)} volume ${volume.name}`).toBeUndefined();
    }
  });

  it('sets only variables the rotator reads', () => {
    const known = new Set<string>([...VARIABLES, ...VARIABLES.map((v) => `${v}_FILE`)]);
    for (const { object, template } of workloads(objectsOf(overlay))) {
      const names = rotatorContainer(template.spec)!.env!.map((e) => e.name);
      for (const name of names.filter((n) => n.startsWith('ROTATOR_'))) expect(known, `${idOf(object)} sets ${name}`).toContain(name);
    }
  });

  it('ships placeholders, never a secret', () => {
    const secrets = objectsOf(overlay).filter((o) => o.kind === 'Secret');
    expect(secrets.length).toBeGreaterThan(0);
    for (const secret of secrets) {
      const values = Object.values(secret.data as Record<string, string>).map((v) => Buffer.from(v, 'base64').toString('utf8'));
      expect(values.length).toBeGreaterThan(0);
      for (const value of values) expect(value, idOf(secret)).toBe('replace-me');
    }
  });

  it('mounts the policy file it was given, as valid YAML', () => {
    const text = policyText(objectsOf(overlay));
    expect(text).toBe(readFileSync(resolve(root, POLICY_FILES[overlay]), 'utf8'));
    const documents = parseAllDocuments(text);
    expect(documents).toHaveLength(1);
    expect(documents[0]!.errors).toEqual([]);
    expect((documents[0]!.toJS() as { tokens: unknown[] }).tokens.length).toBeGreaterThan(0);
  });

  it("passes the product's own policy parser", () => {
    const policy = parsePolicy(policyText(objectsOf(overlay)), '/etc/token-rotator/rotation.yaml');
    expect(policy.tokens.map((t) => t.name)).toEqual(['ingest-api']);
  });
});

/** The rotation.yaml of the ConfigMap the rotator's ROTATOR_CONFIG points into. */
function policyText(objects: K8sObject[]): string {
  const [pod] = workloads(objects);
  const rotator = rotatorContainer(pod!.template.spec)!;
  const file = fileInVolume(rotator, envValue(rotator, 'ROTATOR_CONFIG')!)!;
  const volume = pod!.template.spec.volumes!.find((v) => v.name === file.volume)!;
  const configMap = find(objects, 'ConfigMap', pod!.namespace, volume.configMap!.name)!;
  return data(configMap)[file.file]!;
}

/**
 * The rotator's memory as measured on Node 24.21 with the image's NODE_OPTIONS (--max-semi-space-size=1)
 * and the daemon's own memory flags (src/cli/memory-flags.ts),
 * in bytes of RSS: what the request and the limit must hold. Measure again after a change to the
 * daemon's footprint (`BENCH_ONLY=sidecar,memory npm run bench`) and update these with docs/kubernetes.md (Resources).
 */
const MEASURED = {
  /** An idle daemon with one token, a Kubernetes Secret sink, a rollout reload and the Kubernetes state backend (bench row x1). */
  idleOneToken: 81.9e6,
  /** A run of `once` rotating that token, peak RSS (/usr/bin/time). */
  oncePeak: 116.7e6,
  /** An idle daemon with 100 file-sink tokens (bench row 5a). */
  idleHundredTokens: 83.6e6,
  /** Each 1,000 more tokens (bench row 5c; the top of the range before the daemon's memory flags was 105 MB). */
  perThousandTokens: 18.6e6,
};
/** What a request must leave above the idle figure: the spread between runs is ±5 MB. */
const REQUEST_MARGIN = 1.15;

/** A Kubernetes memory quantity in bytes; only the binary suffixes the manifests use. */
function bytesOf(quantity: string): number {
  const match = /^(\d+)(Ki|Mi|Gi)$/.exec(quantity);
  if (!match) throw new Error(`unexpected memory quantity ${quantity}`);
  return Number(match[1]) * 1024 ** { Ki: 1, Mi: 2, Gi: 3 }[match[2] as 'Ki' | 'Mi' | 'Gi'];
}

describe("the rotator's memory (base/container.yaml, on every shape)", () => {
  const resources = () =>
    (parse(readFileSync(resolve(kubernetesDir, 'base/container.yaml'), 'utf8')) as { spec: PodSpec }).spec.containers[0]!.resources!;

  it('requests at least what the rotator holds idle, with a margin, so the scheduler never places it short', () => {
    const request = bytesOf(resources().requests!.memory!);
    expect(request, 'idle, one token').toBeGreaterThanOrEqual(MEASURED.idleOneToken * REQUEST_MARGIN);
    expect(request, 'a run of once').toBeGreaterThanOrEqual(MEASURED.oncePeak);
    expect(request, 'idle, 100 tokens').toBeGreaterThanOrEqual(MEASURED.idleHundredTokens);
  });

  it('limits at twice the request at least: room for a run and for about a thousand tokens', () => {
    const limit = bytesOf(resources().limits!.memory!);
    expect(limit).toBeGreaterThanOrEqual(2 * bytesOf(resources().requests!.memory!));
    expect(limit).toBeGreaterThanOrEqual(MEASURED.idleHundredTokens + MEASURED.perThousandTokens);
  });
});

describe('the CronJob', () => {
  const cronJob = () => find(objectsOf('cronjob'), 'CronJob', ROTATOR_NAMESPACE, 'token-rotator')!;
  const pod = () => workloads([cronJob()])[0]!.template.spec;

  it('runs `once` every 30 minutes, never two runs at once', () => {
    const spec = cronJob().spec as { schedule: string; concurrencyPolicy: string };
    expect(spec.schedule).toBe('*/30 * * * *');
    expect(spec.concurrencyPolicy).toBe('Forbid');
    expect(rotatorContainer(pod())!.args).toEqual(['once']);
    expect(pod().containers).toHaveLength(1);
  });

  it('has no volume but its policy and its credentials (no state volume at all)', () => {
    const volumes = pod().volumes ?? [];
    expect(volumes.map((v) => Object.keys(v).filter((k) => k !== 'name')[0])).toEqual(['configMap', 'secret']);
    for (const mount of rotatorContainer(pod())!.volumeMounts!) expect(mount.readOnly, mount.name).toBe(true);
  });

  it('mounts the ServiceAccount token: the rotator reaches the API as kubectl does in a pod', () => {
    expect(pod().automountServiceAccountToken).toBe(true);
  });
});

describe('the daemon Deployment', () => {
  const objects = () => objectsOf('deployment');
  const deployment = () => find(objects(), 'Deployment', ROTATOR_NAMESPACE, 'token-rotator')!;
  const template = () => workloads([deployment()])[0]!.template;
  const rotator = () => rotatorContainer(template().spec)!;
  const selects = (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined) =>
    selector !== undefined && Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels?.[k] === v);

  it('runs two replicas of `daemon`, listening where probes and Prometheus reach it', () => {
    expect((deployment().spec as { replicas: number }).replicas).toBe(2);
    expect(rotator().args).toEqual(['daemon', '--listen', '0.0.0.0:9464']);
    expect(rotator().ports).toEqual([{ name: 'metrics', containerPort: 9464 }]);
    expect(template().spec.automountServiceAccountToken).toBe(true);
  });

  it('is alive on /healthz and ready on /readyz', () => {
    expect(rotator().livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    expect(rotator().readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
  });

  it('has a metrics Service on 9464 that selects its pods (ready or not)', () => {
    const service = find(objects(), 'Service', ROTATOR_NAMESPACE, 'token-rotator-metrics')!;
    const spec = service.spec as {
      selector: Record<string, string>;
      ports: Array<{ port: number; targetPort: string | number }>;
      publishNotReadyAddresses?: boolean;
    };
    expect(selects(spec.selector, template().metadata?.labels)).toBe(true);
    expect(spec.ports).toHaveLength(1);
    expect(spec.ports[0]!.port).toBe(9464);
    const target = rotator().ports!.find((p) => p.name === spec.ports[0]!.targetPort || p.containerPort === spec.ports[0]!.targetPort);
    expect(target?.containerPort).toBe(9464);
    expect(spec.publishNotReadyAddresses).toBe(true);
  });

  it('has a PodDisruptionBudget over its pods that still lets a node drain', () => {
    const budget = find(objects(), 'PodDisruptionBudget', ROTATOR_NAMESPACE, 'token-rotator')!;
    const spec = budget.spec as {
      minAvailable?: number;
      maxUnavailable?: number;
      selector: { matchLabels: Record<string, string> };
      unhealthyPodEvictionPolicy?: string;
    };
    expect(selects(spec.selector.matchLabels, template().metadata?.labels)).toBe(true);
    expect(
      selects(
        (deployment().spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels,
        template().metadata?.labels,
      ),
    ).toBe(true);
    expect(spec.minAvailable).toBe(1); // one of the two may go
    expect(spec.maxUnavailable).toBeUndefined(); // the API refuses a budget with both
    expect(spec.unhealthyPodEvictionPolicy).toBe('AlwaysAllow'); // not-ready pods (token service down) do not block drains
  });
});

describe('the native sidecar', () => {
  const objects = () => objectsOf('sidecar');
  const deployment = () => find(objects(), 'Deployment', APP_NAMESPACE, 'ingest-api')!;
  const spec = () => workloads([deployment()])[0]!.template.spec;
  const sidecar = () => spec().initContainers?.find((c) => c.name === 'token-rotator');
  const app = () => spec().containers.find((c) => c.name === 'app')!;

  it('is an init container with restartPolicy Always, not an app container', () => {
    expect(sidecar()).toBeDefined();
    expect(sidecar()!.restartPolicy).toBe('Always');
    expect(spec().containers.map((c) => c.name)).toEqual(['app']);
    expect(sidecar()!.args).toEqual(['daemon', '--listen', '0.0.0.0:9464']);
  });

  it('has no readiness probe, so that the token service being down never makes the app NotReady', () => {
    // A sidecar's readinessProbe decides the Pod's Ready condition (Kubernetes docs, sidecar containers; KEP-753).
    expect(sidecar()!.readinessProbe).toBeUndefined();
    for (const probe of [sidecar()!.livenessProbe, sidecar()!.startupProbe]) expect(probe?.httpGet?.path).not.toBe('/readyz');
  });

  it('starts the app only once its token file is there (startup probe on /startupz), and is restarted alone when stuck (liveness on /healthz)', () => {
    expect(sidecar()!.startupProbe?.httpGet).toEqual({ path: '/startupz', port: 'rotator-http' });
    expect(sidecar()!.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'rotator-http' });
  });

  it('delivers to a file on a memory-backed volume that the app reads, read-only', () => {
    const policy = parse(policyText(objects())) as { tokens: Array<{ sinks: Array<{ type: string; path: string }> }> };
    const sinks = policy.tokens.flatMap((t) => t.sinks);
    expect(sinks.map((s) => s.type)).toEqual(['file']);
    const rotatorFile = fileInVolume(sidecar()!, sinks[0]!.path)!;
    const appFile = fileInVolume(app(), sinks[0]!.path)!;
    expect(rotatorFile.volume).toBe(appFile.volume);
    expect(spec().volumes!.find((v) => v.name === rotatorFile.volume)!.emptyDir?.medium).toBe('Memory');
    expect(app().volumeMounts!.find((m) => m.name === appFile.volume)!.readOnly).toBe(true);
    expect(sidecar()!.volumeMounts!.find((m) => m.name === rotatorFile.volume)!.readOnly).toBeFalsy();
    expect(envValue(app(), 'AXIOM_TOKEN_FILE')).toBe(sinks[0]!.path);
  });

  it('gives the ServiceAccount token to the rotator only', () => {
    expect(spec().automountServiceAccountToken).toBe(false);
    const mount = sidecar()!.volumeMounts!.find((m) => m.mountPath === SERVICE_ACCOUNT_DIR)!;
    expect(mount.readOnly).toBe(true);
    const sources = spec().volumes!.find((v) => v.name === mount.name)!.projected!.sources;
    expect(sources.map((s) => s.serviceAccountToken?.path ?? s.configMap?.items?.[0]?.path ?? s.downwardAPI?.items[0]?.path)).toEqual([
      'token',
      'ca.crt',
      'namespace',
    ]);
    expect(app().volumeMounts!.some((m) => m.name === mount.name || m.mountPath.startsWith('/var/run/secrets/kubernetes.io'))).toBe(false);
  });

  it('runs several pods with rolling updates: each fills its own file from the held secret, with no new token', () => {
    const deploymentSpec = deployment().spec as { replicas: number; strategy?: { type: string } };
    expect(deploymentSpec.replicas).toBeGreaterThan(1);
    expect(deploymentSpec.strategy?.type ?? 'RollingUpdate').toBe('RollingUpdate');
  });
});

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

import { expect } from 'vitest';
import { parseAllDocuments } from 'yaml';

import { modelProblems } from './kubernetes-models.js';

/**
 * The Kubernetes examples as users apply them: a kustomization rendered by the real `kubectl
 * kustomize` (kustomize as kubectl embeds it), and the shapes the tests read from its objects.
 * Nothing here talks to a cluster.
 */

export interface Metadata {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: Metadata;
  [field: string]: unknown;
}
export interface SecurityContext {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  runAsGroup?: number;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  privileged?: boolean;
  capabilities?: { add?: string[]; drop?: string[] };
  seccompProfile?: { type: string };
  appArmorProfile?: { type: string };
  seLinuxOptions?: { type?: string; user?: string; role?: string };
  windowsOptions?: { hostProcess?: boolean };
  procMount?: string;
  fsGroup?: number;
  supplementalGroups?: number[];
  sysctls?: Array<{ name: string; value: string }>;
}
export interface Probe {
  httpGet?: { path: string; port: number | string; host?: string };
  exec?: unknown;
  tcpSocket?: { port: number | string; host?: string };
}
export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string }; configMapKeyRef?: { name: string; key: string } };
}
export interface Container {
  name: string;
  image: string;
  args?: string[];
  restartPolicy?: string;
  env?: EnvVar[];
  envFrom?: Array<{ secretRef?: { name: string }; configMapRef?: { name: string } }>;
  ports?: Array<{ name?: string; containerPort: number; hostPort?: number }>;
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
  securityContext?: SecurityContext;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: { postStart?: Probe; preStop?: Probe };
}
export interface Volume {
  name: string;
  configMap?: { name: string; items?: Array<{ key: string; path: string }> };
  secret?: { secretName: string; items?: Array<{ key: string; path: string }> };
  persistentVolumeClaim?: { claimName: string };
  emptyDir?: { medium?: string; sizeLimit?: string };
  hostPath?: unknown;
  projected?: {
    sources: Array<{
      configMap?: { name: string; items?: Array<{ key: string; path: string }> };
      secret?: { name: string };
      serviceAccountToken?: { path: string };
      downwardAPI?: { items: Array<{ path: string; fieldRef?: { fieldPath: string } }> };
    }>;
  };
  [type: string]: unknown;
}
export interface PodSpec {
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  securityContext?: SecurityContext;
  containers: Container[];
  initContainers?: Container[];
  ephemeralContainers?: Container[];
  volumes?: Volume[];
}
export interface PodTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: PodSpec;
}
/** A workload's pod template, wherever its kind keeps it. */
export interface Workload {
  object: K8sObject;
  namespace: string;
  template: PodTemplate;
}

const execFileAsync = promisify(execFile);

/** `kubectl kustomize DIR`, parsed: every object it prints. */
export async function renderKustomization(dir: string): Promise<K8sObject[]> {
  let stdout: string;
  try {
    ({ stdout } = await execFileAsync('kubectl', ['kustomize', dir], { maxBuffer: 16 * 1024 * 1024 }));
  } catch (error) {
    throw new Error(
      `kubectl kustomize ${dir} failed (kubectl with kustomize must be on PATH): ${(error as { stderr?: string }).stderr ?? error}`,
      { cause: error },
    );
  }
  return parseAllDocuments(stdout).map((document) => {
    expect(document.errors).toEqual([]);
    return document.toJS() as K8sObject;
  });
}

export const idOf = (object: K8sObject) => `${object.kind} ${object.metadata.namespace ?? ''}/${object.metadata.name}`;

/** Checks an object against the Kubernetes OpenAPI schema of its kind (kubernetes-models); throws when it is not valid. */
export async function validateWithModels(object: K8sObject): Promise<void> {
  // One check for every manifest test: the models' validation, and no field they do not know.
  const problems = await modelProblems(object);
  if (problems.length > 0) throw new Error(`${object.kind} ${object.metadata.name}: ${problems.join('; ')}`);
}

export function workloads(objects: K8sObject[]): Workload[] {
  return objects.flatMap((object): Workload[] => {
    const spec = object.spec as Record<string, unknown> | undefined;
    const namespace = object.metadata.namespace ?? '';
    if (object.kind === 'CronJob') {
      const jobSpec = (spec!.jobTemplate as { spec: { template: PodTemplate } }).spec;
      return [{ object, namespace, template: jobSpec.template }];
    }
    if (['Deployment', 'StatefulSet', 'DaemonSet', 'Job'].includes(object.kind))
      return [{ object, namespace, template: spec!.template as PodTemplate }];
    if (object.kind === 'Pod') return [{ object, namespace, template: { metadata: object.metadata, spec: spec as unknown as PodSpec } }];
    return [];
  });
}

export const allContainers = (spec: PodSpec) => [...(spec.initContainers ?? []), ...spec.containers];

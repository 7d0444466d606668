import { resolve } from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { idOf, type K8sObject, type PodTemplate, renderKustomization, validateWithModels, workloads } from '../helpers/kustomize.js';
import { restrictedViolations } from '../helpers/pod-security-restricted.js';

/**
 * Pod Security `restricted`: the namespace shipped for the rotator enforces it, and every pod the
 * overlays render satisfies it, by the profile's documented rules (test/helpers/pod-security-restricted.ts).
 */

const kubernetesDir = resolve(import.meta.dirname, '../../config/kubernetes');
const OVERLAYS = ['cronjob', 'deployment', 'sidecar'] as const;
const LEVELS = ['enforce', 'audit', 'warn'] as const;

const rendered = new Map<string, K8sObject[]>();
beforeAll(async () => {
  for (const overlay of OVERLAYS) rendered.set(overlay, await renderKustomization(resolve(kubernetesDir, 'overlays', overlay)));
  rendered.set('namespace', await renderKustomization(resolve(kubernetesDir, 'namespace')));
});

describe.each(OVERLAYS)('config/kubernetes/overlays/%s under Pod Security restricted', (overlay) => {
  it('renders only pods that the restricted profile admits, init containers included', () => {
    const pods = workloads(rendered.get(overlay)!);
    expect(pods.length).toBeGreaterThan(0);
    for (const { object, template } of pods) expect(restrictedViolations(template), idOf(object)).toEqual([]);
  });
});

describe('config/kubernetes/namespace', () => {
  const namespaceObject = () => rendered.get('namespace')!.find((o) => o.kind === 'Namespace')!;

  it('is one valid Namespace, the one the CronJob and Deployment overlays run in', async () => {
    const objects = rendered.get('namespace')!;
    expect(objects.map(idOf)).toEqual(['Namespace /token-rotator']);
    await validateWithModels(objects[0]!);
    for (const overlay of ['cronjob', 'deployment'])
      for (const { namespace } of workloads(rendered.get(overlay)!)) expect(namespace, overlay).toBe(namespaceObject().metadata.name);
  });

  it('enforces, audits and warns on the restricted profile, each at a stated version', () => {
    const labels = namespaceObject().metadata.labels ?? {};
    for (const level of LEVELS) {
      expect(labels[`pod-security.kubernetes.io/${level}`], level).toBe('restricted');
      expect(labels[`pod-security.kubernetes.io/${level}-version`], `${level}-version`).toMatch(/^(latest|v1\.\d+)$/);
    }
    // enforce pinned, so that a cluster upgrade never starts refusing pods that ran the day before
    expect(labels['pod-security.kubernetes.io/enforce-version']).toMatch(/^v1\.\d+$/);
  });
});

describe('the restricted checker itself', () => {
  /** The CronJob's pod, which passes, changed by `change`. */
  function violationsAfter(change: (template: PodTemplate) => void): string[] {
    const template = structuredClone(workloads(rendered.get('cronjob')!)[0]!.template);
    change(template);
    return restrictedViolations(template);
  }
  const rotator = (template: PodTemplate) => template.spec.containers[0]!;

  it.each<[string, (template: PodTemplate) => void, RegExp]>([
    ['root allowed', (t) => delete rotator(t).securityContext!.runAsNonRoot, /runAsNonRoot must be true/],
    ['uid 0', (t) => (rotator(t).securityContext!.runAsUser = 0), /runAsUser must not be 0/],
    ['privilege escalation left unset', (t) => delete rotator(t).securityContext!.allowPrivilegeEscalation, /allowPrivilegeEscalation/],
    ['no seccomp profile', (t) => delete rotator(t).securityContext!.seccompProfile, /seccompProfile.type must be RuntimeDefault/],
    ['seccomp Unconfined', (t) => (rotator(t).securityContext!.seccompProfile = { type: 'Unconfined' }), /Unconfined/],
    ['capabilities kept', (t) => (rotator(t).securityContext!.capabilities = { drop: ['NET_RAW'] }), /drop must include ALL/],
    ['a capability added', (t) => (rotator(t).securityContext!.capabilities!.add = ['SYS_ADMIN']), /SYS_ADMIN/],
    ['privileged', (t) => (rotator(t).securityContext!.privileged = true), /privileged/],
    ['host network', (t) => (t.spec.hostNetwork = true), /hostNetwork/],
    ['a hostPath volume', (t) => t.spec.volumes!.push({ name: 'host', hostPath: { path: '/' } }), /hostPath is not an allowed volume type/],
    ['an nfs volume', (t) => t.spec.volumes!.push({ name: 'nfs', nfs: { server: 'nfs', path: '/' } }), /nfs is not an allowed volume type/],
    ['a host port', (t) => (rotator(t).ports = [{ containerPort: 9464, hostPort: 9464 }]), /hostPort/],
    ['a probe to another host', (t) => (rotator(t).livenessProbe = { httpGet: { path: '/', port: 1, host: 'x' } }), /host must be unset/],
    ['an unsafe sysctl', (t) => (t.spec.securityContext!.sysctls = [{ name: 'kernel.msgmax', value: '1' }]), /kernel.msgmax/],
    ['a root fsGroup', (t) => (t.spec.securityContext!.fsGroup = 0), /root group/],
    [
      'an init container without settings',
      (t) => (t.spec.initContainers = [{ name: 'setup', image: 'busybox' }]),
      /initContainers\[0\] \(setup\).*allowPrivilegeEscalation/,
    ],
  ])('refuses %s', (_, change, expected) => {
    expect(violationsAfter(() => undefined)).toEqual([]);
    expect(violationsAfter(change).join('\n')).toMatch(expected);
  });

  it('takes runAsNonRoot and seccomp from the pod when a container leaves them unset, as the profile allows', () => {
    expect(
      violationsAfter((t) => {
        delete rotator(t).securityContext!.runAsNonRoot;
        delete rotator(t).securityContext!.seccompProfile;
        t.spec.securityContext = { ...t.spec.securityContext, runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } };
      }),
    ).toEqual([]);
  });
});

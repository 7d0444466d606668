import { readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';

import { allContainers, idOf, type K8sObject, renderKustomization, validateWithModels, workloads } from '../helpers/kustomize.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/**
 * config/kubernetes/components/network-policy as a user adds it: beside an overlay, in a
 * kustomization of their own, rendered by kubectl kustomize. What it lets the rotator's pods reach:
 * DNS, the token service, the authorization server and the API server, and nothing else; what may
 * reach them: Prometheus on the metrics port, from the monitoring namespace.
 */

const kubernetesDir = resolve(import.meta.dirname, '../../config/kubernetes');
const componentDir = join(kubernetesDir, 'components/network-policy');
const OVERLAYS = ['cronjob', 'deployment'] as const;

interface Port {
  protocol?: string;
  port: number;
}
interface Peer {
  ipBlock?: { cidr: string; except?: string[] };
  namespaceSelector?: { matchLabels?: Record<string, string> };
  podSelector?: { matchLabels?: Record<string, string> };
}
interface NetworkPolicySpec {
  podSelector: { matchLabels?: Record<string, string> };
  policyTypes: string[];
  egress?: Array<{ to?: Peer[]; ports?: Port[] }>;
  ingress?: Array<{ from?: Peer[]; ports?: Port[] }>;
}

/** RFC 5737's documentation ranges: addresses that belong to no real host, for placeholders. */
const DOCUMENTATION_RANGES = ['192.0.2.', '198.51.100.', '203.0.113.'];

let dir: string;
const rendered = new Map<string, K8sObject[]>();
beforeAll(async () => {
  dir = await makeTempDir();
  for (const overlay of OVERLAYS) {
    const userDir = join(dir, overlay);
    await mkdir(userDir);
    await writeFile(
      join(userDir, 'kustomization.yaml'),
      stringify({
        apiVersion: 'kustomize.config.k8s.io/v1beta1',
        kind: 'Kustomization',
        resources: [relative(userDir, join(kubernetesDir, 'overlays', overlay))],
        components: [relative(userDir, componentDir)],
      }),
    );
    rendered.set(overlay, await renderKustomization(userDir));
  }
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const policiesOf = (overlay: string) => rendered.get(overlay)!.filter((o) => o.kind === 'NetworkPolicy');
const specOf = (policy: K8sObject) => policy.spec as NetworkPolicySpec;
const selects = (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined) =>
  Object.keys(selector ?? {}).length > 0 && Object.entries(selector!).every(([k, v]) => labels?.[k] === v);
const portOf = (url: string) => Number(new URL(url).port || (new URL(url).protocol === 'https:' ? 443 : 80));

describe.each(OVERLAYS)('components/network-policy beside overlays/%s', (overlay) => {
  const pod = () => workloads(rendered.get(overlay)!)[0]!;
  const egress = () => policiesOf(overlay).flatMap((p) => (specOf(p).egress ?? []).map((rule) => ({ policy: p.metadata.name, rule })));
  const ingress = () => policiesOf(overlay).flatMap((p) => specOf(p).ingress ?? []);

  it('adds one valid NetworkPolicy per destination, in the namespace of the rotator, each selecting its pods', async () => {
    expect(
      policiesOf(overlay)
        .map((p) => p.metadata.name)
        .sort(),
    ).toEqual([
      'token-rotator-egress-authorization-server',
      'token-rotator-egress-dns',
      'token-rotator-egress-kubernetes-api',
      'token-rotator-egress-token-service',
      'token-rotator-ingress-metrics',
    ]);
    for (const policy of policiesOf(overlay)) {
      await validateWithModels(policy);
      expect(policy.metadata.namespace, idOf(policy)).toBe(pod().namespace);
      expect(selects(specOf(policy).podSelector.matchLabels, pod().template.metadata?.labels), `${idOf(policy)} selects the pod`).toBe(
        true,
      );
    }
  });

  it('isolates the pods both ways: only what a rule names is allowed in or out', () => {
    const types = new Set(policiesOf(overlay).flatMap((p) => specOf(p).policyTypes));
    expect([...types].sort()).toEqual(['Egress', 'Ingress']);
  });

  it('lets the pods out only to named destinations on named ports: never anywhere, never a wide block', () => {
    for (const { policy, rule } of egress()) {
      expect(rule.to?.length, `${policy}: a rule without 'to' reaches every address`).toBeGreaterThan(0);
      expect(rule.ports?.length, `${policy}: a rule without ports reaches every port`).toBeGreaterThan(0);
      for (const peer of rule.to!) {
        if (peer.ipBlock) expect(Number(peer.ipBlock.cidr.split('/')[1]), `${policy} ${peer.ipBlock.cidr}`).toBeGreaterThanOrEqual(16);
        else expect(peer.namespaceSelector?.matchLabels && peer.podSelector?.matchLabels, `${policy}: pods named by label`).toBeTruthy();
      }
    }
  });

  it('reaches DNS, the token service and the authorization server on their ports, and the API server', () => {
    const rulesOf = (name: string) =>
      egress()
        .filter((e) => e.policy === name)
        .map((e) => e.rule);
    const ports = (name: string) => rulesOf(name).flatMap((r) => r.ports!.map((p) => `${p.protocol ?? 'TCP'}/${p.port}`));
    expect(ports('token-rotator-egress-dns').sort()).toEqual(['TCP/53', 'UDP/53']);
    expect(rulesOf('token-rotator-egress-dns')[0]!.to).toEqual([
      {
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
        podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
      },
    ]);
    const rotator = allContainers(pod().template.spec).find((c) => c.name === 'token-rotator')!;
    const env = (name: string) => rotator.env!.find((e) => e.name === name)!.value!;
    expect(ports('token-rotator-egress-token-service')).toEqual([`TCP/${portOf(env('ROTATOR_API_URL'))}`]);
    expect(ports('token-rotator-egress-authorization-server')).toEqual([`TCP/${portOf(env('ROTATOR_OAUTH_ISSUER'))}`]);
    // the `kubernetes` Service's port, and the endpoints' behind it (rewritten before or after the policy)
    expect(ports('token-rotator-egress-kubernetes-api').sort()).toEqual(['TCP/443', 'TCP/6443']);
    expect(egress().map((e) => e.policy)).not.toContain('token-rotator-ingress-metrics');
  });

  it('lets in only the monitoring namespace, on the metrics port, and only that', () => {
    expect(ingress()).toEqual([
      {
        from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
        ports: [{ protocol: 'TCP', port: 9464 }],
      },
    ]);
  });
});

describe('components/network-policy, as shipped', () => {
  it("lets Prometheus reach the Deployment's metrics port", () => {
    const rotator = allContainers(workloads(rendered.get('deployment')!)[0]!.template.spec).find((c) => c.name === 'token-rotator')!;
    expect(rotator.ports).toContainEqual({ name: 'metrics', containerPort: 9464 });
  });

  it('holds only placeholder addresses, each marked replace-me: a copy applied unchanged opens nothing', () => {
    const text = readFileSync(join(componentDir, 'network-policy.yaml'), 'utf8');
    const cidrLines = text.split('\n').filter((line) => /^\s*cidr:/.test(line));
    expect(cidrLines.length).toBeGreaterThan(0);
    for (const line of cidrLines) {
      expect(line, 'marked').toMatch(/# replace-me: /);
      const cidr = /cidr:\s*(\S+)/.exec(line)![1]!;
      expect(
        DOCUMENTATION_RANGES.some((range) => cidr.startsWith(range)),
        `${cidr} is a documentation address`,
      ).toBe(true);
    }
  });
});

import { Document, isSeq, type YAMLMap, type YAMLSeq } from 'yaml';

import type { RoleSpec } from './least-privilege.js';

/** The ServiceAccount the rotator runs as: the subject of every RoleBinding. */
export interface ServiceAccountRef {
  name: string;
  namespace: string;
}

const RBAC_GROUP = 'rbac.authorization.k8s.io';
const LABELS = { 'app.kubernetes.io/name': 'token-rotator' };

/** A Role or RoleBinding, as `kubectl apply` takes it. */
export interface RbacObject {
  apiVersion: `${typeof RBAC_GROUP}/v1`;
  kind: 'Role' | 'RoleBinding';
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  [field: string]: unknown;
}

const roleName = (spec: RoleSpec, serviceAccount: ServiceAccountRef) => `${serviceAccount.name}-${spec.purpose}`;

/** Each Role followed by the RoleBinding that gives it to the ServiceAccount. */
export function roleObjects(specs: readonly RoleSpec[], serviceAccount: ServiceAccountRef): RbacObject[] {
  return specs.flatMap((spec): RbacObject[] => {
    const metadata = { name: roleName(spec, serviceAccount), namespace: spec.namespace, labels: LABELS };
    return [
      { apiVersion: `${RBAC_GROUP}/v1`, kind: 'Role', metadata, rules: spec.rules.map((r) => r.rule) },
      {
        apiVersion: `${RBAC_GROUP}/v1`,
        kind: 'RoleBinding',
        metadata,
        roleRef: { apiGroup: RBAC_GROUP, kind: 'Role', name: metadata.name },
        subjects: [{ kind: 'ServiceAccount', name: serviceAccount.name, namespace: serviceAccount.namespace }],
      },
    ];
  });
}

const HEADER = [
  ' The least privilege of token-rotator for one policy, as `token-rotator rbac` printed it: every',
  ' object it reads or writes is named (resourceNames), except where no name can be given: a create',
  ' (POST) names no object, and a rollout by selector finds its workloads by listing. Print it again',
  ' whenever the policy gains, renames or drops a token, a sink or a reload: what it does not name is',
  ' refused (403), and what it no longer needs stays granted until you apply the new one.',
];

const PURPOSE: Record<RoleSpec['purpose'], (spec: RoleSpec) => string> = {
  state: (spec) => ` The state (ROTATOR_STATE_BACKEND=kubernetes) in ${spec.namespace}: Secrets and Leases named after each token.`,
  deliver: (spec) => ` What the sinks write and the reloads restart in ${spec.namespace}.`,
};

/** The objects as YAML documents, each rule with why the rotator needs it; a comment alone when there is nothing to grant. */
export function rolesYaml(specs: readonly RoleSpec[], serviceAccount: ServiceAccountRef): string {
  const objects = roleObjects(specs, serviceAccount);
  if (objects.length === 0) {
    return '# Nothing to grant: with this policy and state backend, token-rotator makes no Kubernetes API call.\n';
  }
  return objects
    .map((object, i) => {
      const spec = specs[Math.floor(i / 2)]!;
      const document = new Document(object);
      if (object.kind === 'Role') {
        document.commentBefore = [...(i === 0 ? [...HEADER, ''] : []), PURPOSE[spec.purpose](spec)].join('\n');
        const rules = document.get('rules', true) as YAMLSeq;
        rules.items.forEach((item, r) => {
          const map = item as YAMLMap;
          map.commentBefore = spec.rules[r]!.why.map((line) => ` ${line}`).join('\n');
          // Short lists on one line, as hand-written Roles have them.
          for (const pair of map.items) if (isSeq(pair.value)) pair.value.flow = true;
        });
      }
      return document.toString({ lineWidth: 0, flowCollectionPadding: false });
    })
    .join('---\n');
}

import type { TokenPolicy } from '../config/types.js';
import { JOURNAL_INDEX_NAME, leaseObjectName, stateObjectName } from '../kubernetes/rotator-objects.js';
import type { WorkloadKind } from '../reload/rollout/rollout-config.js';

/** An rbac.authorization.k8s.io/v1 PolicyRule, as a Role carries it. */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
  verbs: string[];
}

/** A rule and why the rotator needs it, in comment lines. */
export interface ExplainedRule {
  rule: PolicyRule;
  why: string[];
}

/** One Role: the state's, or what the sinks and reloads need in one namespace. */
export interface RoleSpec {
  /** `state` or `deliver`: the Role's name is the ServiceAccount's followed by it. */
  purpose: 'state' | 'deliver';
  namespace: string;
  rules: ExplainedRule[];
}

const VERB_ORDER = ['get', 'list', 'create', 'update', 'patch', 'delete'];
const RESOURCE: Record<WorkloadKind, string> = { Deployment: 'deployments', StatefulSet: 'statefulsets', DaemonSet: 'daemonsets' };

const sorted = (names: Iterable<string>) => [...new Set(names)].sort();

function rule(group: string, resource: string, verbs: string[], names?: Iterable<string>): PolicyRule {
  return {
    apiGroups: [group],
    resources: [resource],
    ...(names === undefined ? {} : { resourceNames: sorted(names) }),
    verbs: [...verbs].sort((a, b) => VERB_ORDER.indexOf(a) - VERB_ORDER.indexOf(b)),
  };
}

/**
 * The state backend's calls, object by object: each name's state Secret and Lease, named exactly as
 * the backend names them, and the journal index. Only create goes unnamed: a POST names no object,
 * so Kubernetes cannot restrict it by resourceNames.
 */
function stateRole(tokens: readonly TokenPolicy[], namespace: string): RoleSpec {
  const names = tokens.map((t) => t.name);
  const rules: ExplainedRule[] = [
    {
      rule: rule('', 'secrets', ['create']),
      why: [
        "create: a name's first write creates its state Secret, and the first rotation ever the journal",
        'index. A create (POST) names no object, so Kubernetes cannot restrict it by name: this lets the',
        'rotator create Secrets here, but not read or change any Secret it is not given by name below.',
      ],
    },
  ];
  if (names.length > 0) {
    rules.push({
      rule: rule('', 'secrets', ['get', 'update', 'delete'], names.map(stateObjectName)),
      why: [
        "Each token's state Secret (its record, and an unfinished rotation with its sealed staged secret):",
        'get, update with a resourceVersion precondition, delete once it holds neither.',
      ],
    });
  }
  rules.push(
    {
      rule: rule('', 'secrets', ['get', 'update'], [JOURNAL_INDEX_NAME]),
      why: [
        'The names that may have an unfinished rotation: how one whose name left the policy is found',
        'without listing Secrets (a LIST would read every Secret in the namespace).',
      ],
    },
    {
      rule: rule('coordination.k8s.io', 'leases', ['create']),
      why: ['create: the first lock of a name creates its Lease (create cannot be restricted by name).'],
    },
  );
  if (names.length > 0) {
    rules.push({
      rule: rule('coordination.k8s.io', 'leases', ['get', 'update'], names.map(leaseObjectName)),
      why: [
        "Each token's Lease: acquire, renew while held, take over an expired one, release (an update",
        'that clears its holder, as client-go does; a Lease is never deleted).',
      ],
    });
  }
  return { purpose: 'state', namespace, rules };
}

/** The Kubernetes Events on the Secrets and workloads of a namespace (see src/kubernetes/events). */
const EVENTS_RULE: ExplainedRule = {
  rule: rule('events.k8s.io', 'events', ['create', 'patch']),
  why: [
    'Kubernetes Events on the Secrets written and the workloads restarted here (Rotated, Repaired,',
    'VerifyFailed...): create a new one, patch the series of a repeated one. Neither can be restricted',
    'by name (an Event is named when it is created). Without it the Events are not recorded, and',
    'nothing else changes; ROTATOR_KUBERNETES_EVENTS=off stops asking for them.',
  ],
};

/** What one namespace's sinks and reloads call, by name wherever the call names its object. */
function deliverRoles(tokens: readonly TokenPolicy[], events: boolean): RoleSpec[] {
  const secrets = new Map<string, Set<string>>();
  const named = new Map<string, Map<WorkloadKind, Set<string>>>();
  const selected = new Map<string, Set<WorkloadKind>>();
  const inNamespace = <T>(map: Map<string, T>, namespace: string, make: () => T) =>
    map.get(namespace) ?? map.set(namespace, make()).get(namespace)!;
  for (const token of tokens) {
    for (const sink of token.sinks) {
      if (sink.type === 'kubernetes-secret') inNamespace(secrets, sink.namespace, () => new Set<string>()).add(sink.name);
    }
    for (const reload of token.reload) {
      if (reload.type !== 'rollout') continue;
      if ('name' in reload.workload) {
        const kinds = inNamespace(named, reload.namespace, () => new Map<WorkloadKind, Set<string>>());
        inNamespace(kinds, reload.kind, () => new Set<string>()).add(reload.workload.name);
      } else {
        inNamespace(selected, reload.namespace, () => new Set<WorkloadKind>()).add(reload.kind);
      }
    }
  }
  const namespaces = sorted([...secrets.keys(), ...named.keys(), ...selected.keys()]);
  return namespaces.map((namespace): RoleSpec => {
    const rules: ExplainedRule[] = [];
    const names = secrets.get(namespace);
    if (names) {
      rules.push({
        rule: rule('', 'secrets', ['get', 'patch', 'create'], names),
        why: [
          'The kubernetes-secret sinks: get to read a Secret back (drift checks, adoption, verification),',
          'patch for the server-side apply of a new value, and create because an apply that creates a',
          "missing Secret is authorized as create of that Secret's name. No list: each Secret is read by",
          'its name (a LIST would read every Secret in the namespace; refused, the sink reads by name).',
        ],
      });
    }
    for (const [kind, workloads] of [...(named.get(namespace) ?? [])].sort(([a], [b]) => a.localeCompare(b))) {
      rules.push({
        rule: rule('apps', RESOURCE[kind], ['get', 'patch'], workloads),
        why: [`The rollout reloads: get the ${kind} before restarting it, patch its pod template annotation.`],
      });
    }
    for (const kind of sorted(selected.get(namespace) ?? []) as WorkloadKind[]) {
      rules.push({
        rule: rule('apps', RESOURCE[kind], ['get', 'list', 'patch']),
        why: [
          `The rollout reloads by selector: the ${kind}s to restart are found by listing, so these`,
          'cannot be restricted by name. Name the workloads in the policy to narrow them.',
        ],
      });
    }
    if (events) rules.push(EVENTS_RULE);
    return { purpose: 'deliver', namespace, rules };
  });
}

/**
 * Every Role the rotator needs for a policy, in a stable order: the state's first (when the state
 * is in Kubernetes), then one per namespace its sinks and reloads reach, with the Events there.
 */
export function leastPrivilegeRoles(
  tokens: readonly TokenPolicy[],
  stateNamespace: string | undefined,
  /** `events`: the Kubernetes Events the rotator records (on unless ROTATOR_KUBERNETES_EVENTS=off). */
  options: { events: boolean } = { events: true },
): RoleSpec[] {
  return [...(stateNamespace === undefined ? [] : [stateRole(tokens, stateNamespace)]), ...deliverRoles(tokens, options.events)];
}

import { isJsonObject, type JsonObject, type JsonValue } from './json.js';

/** The attributes RBAC decides on (k8s.io/apiserver authorizer.Attributes, for a resource request). */
export interface RbacRequest {
  verb: string;
  group: string;
  resource: string;
  /** Undefined for a cluster-scoped request. */
  namespace?: string;
  /** Empty for a collection: a create, or a list without a `metadata.name` field selector. */
  name: string;
}

interface PolicyRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames: string[];
}

const strings = (value: JsonValue | undefined): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

const rulesOf = (role: JsonObject): PolicyRule[] =>
  (Array.isArray(role.rules) ? role.rules : []).filter(isJsonObject).map((rule) => ({
    verbs: strings(rule.verbs),
    apiGroups: strings(rule.apiGroups),
    resources: strings(rule.resources),
    resourceNames: strings(rule.resourceNames),
  }));

/**
 * rbac/v1 RuleAllows: every field matches exactly or by `*`, and `resourceNames`, when given, only
 * a request that names one of them. A create (POST to a collection) names no object, so a rule with
 * resourceNames never allows it; a server-side apply or PUT that creates is authorized as create
 * with its object's name, so it does.
 */
function ruleAllows(rule: PolicyRule, request: RbacRequest): boolean {
  const has = (list: string[], value: string) => list.includes('*') || list.includes(value);
  return (
    has(rule.verbs, request.verb) &&
    has(rule.apiGroups, request.group) &&
    has(rule.resources, request.resource) &&
    (rule.resourceNames.length === 0 || (request.name !== '' && rule.resourceNames.includes(request.name)))
  );
}

/** The groups the API server's authenticators put a user in: a ServiceAccount's also name it and its namespace. */
function groupsOf(user: string): string[] {
  const serviceAccount = /^system:serviceaccount:([^:]+):[^:]+$/.exec(user);
  return ['system:authenticated', ...(serviceAccount ? ['system:serviceaccounts', `system:serviceaccounts:${serviceAccount[1]}`] : [])];
}

/** Whether a binding's subjects include `user` (a ServiceAccount's user is system:serviceaccount:<namespace>:<name>). */
function binds(binding: JsonObject, user: string): boolean {
  const bindingNamespace = metadataOf(binding).namespace;
  return (Array.isArray(binding.subjects) ? binding.subjects : []).filter(isJsonObject).some((subject) => {
    const name = typeof subject.name === 'string' ? subject.name : '';
    switch (subject.kind) {
      case 'User':
        return name === user;
      case 'ServiceAccount': {
        const namespace = typeof subject.namespace === 'string' ? subject.namespace : bindingNamespace;
        return user === `system:serviceaccount:${namespace}:${name}`;
      }
      case 'Group':
        return groupsOf(user).includes(name);
      default:
        return false;
    }
  });
}

function metadataOf(object: JsonObject): { name?: string; namespace?: string } {
  const metadata = isJsonObject(object.metadata) ? object.metadata : {};
  return {
    ...(typeof metadata.name === 'string' ? { name: metadata.name } : {}),
    ...(typeof metadata.namespace === 'string' ? { namespace: metadata.namespace } : {}),
  };
}

/**
 * What the RBAC authorizer decides for `user` from these Roles, ClusterRoles, RoleBindings and
 * ClusterRoleBindings (as `kubectl apply` would store them): allowed only when a binding of the
 * user grants it. A RoleBinding grants its Role's (or a ClusterRole's) rules in its own namespace
 * only; a ClusterRoleBinding grants a ClusterRole's rules everywhere. There are no deny rules.
 */
export function rbacAllows(objects: readonly JsonObject[], user: string, request: RbacRequest): boolean {
  const role = (kind: string, name: string, namespace?: string) =>
    objects.find((o) => o.kind === kind && metadataOf(o).name === name && metadataOf(o).namespace === namespace);
  return objects.some((binding) => {
    if ((binding.kind !== 'RoleBinding' && binding.kind !== 'ClusterRoleBinding') || !binds(binding, user)) return false;
    const ref = isJsonObject(binding.roleRef) ? binding.roleRef : {};
    const refName = typeof ref.name === 'string' ? ref.name : '';
    const { namespace } = metadataOf(binding);
    if (binding.kind === 'RoleBinding' && namespace !== request.namespace) return false;
    const granted =
      ref.kind === 'Role' && binding.kind === 'RoleBinding' ? role('Role', refName, namespace) : role('ClusterRole', refName, undefined);
    return granted !== undefined && rulesOf(granted).some((rule) => ruleAllows(rule, request));
  });
}

/**
 * The object a list names, as the API server's RequestInfo takes it: a `fieldSelector` that requires
 * `metadata.name` to equal one value makes the list about that name, which resourceNames can allow.
 */
export function listedName(fieldSelector: string | null): string {
  for (const term of (fieldSelector ?? '').split(',')) {
    const match = /^\s*metadata\.name\s*==?\s*(.*?)\s*$/.exec(term);
    if (match) return match[1]!;
  }
  return '';
}

import type { ResourceType } from './resource-types.js';
import { forbidden } from './status-error.js';

/**
 * A verb the double's one user may not use on a resource, as an RBAC Role that lacks it: so tests
 * can run a client with least privilege (a Role that grants get and patch by resourceNames, which
 * can never grant list). `namespace` limits the refusal to one namespace; without it, everywhere.
 */
export interface ForbiddenAccess {
  /** A Kubernetes verb: get, list, watch, create, update, patch, delete. */
  verb: string;
  /** The plural, as in URLs: `secrets`, `leases`. */
  resource: string;
  namespace?: string;
}

/** What the authorizer is asked about a resource request (k8s.io/apiserver authorizer.Attributes). */
export interface AccessRequest {
  verb: string;
  type: ResourceType;
  namespace?: string;
  /** Empty for a collection. */
  name: string;
}

/**
 * Throws the 403 the API server's authorization filter answers, before the request reaches the
 * resource's handler (so also for an object that does not exist): `secrets is forbidden: User "u"
 * cannot list resource "secrets" in API group "" in the namespace "apps"`, the name quoted after
 * the resource when there is one (responsewriters.forbiddenMessage with RBAC's empty reason).
 */
export function authorize(rules: readonly ForbiddenAccess[], user: string, request: AccessRequest): void {
  const { verb, type, namespace, name } = request;
  const denied = rules.some(
    (rule) => rule.verb === verb && rule.resource === type.resource && (rule.namespace === undefined || rule.namespace === namespace),
  );
  if (!denied) return;
  const scope = namespace !== undefined ? `in the namespace ${JSON.stringify(namespace)}` : 'at the cluster scope';
  const why = `User ${JSON.stringify(user)} cannot ${verb} resource ${JSON.stringify(type.resource)} in API group ${JSON.stringify(type.group)} ${scope}`;
  throw forbidden({ group: type.group, resource: type.resource }, name, why);
}

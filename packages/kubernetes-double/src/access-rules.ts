import type { JsonObject } from './json.js';
import { rbacAllows } from './rbac.js';
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

/** What the user may do, read at each request. */
export interface AccessRules {
  /** Refused whatever else says (a test's quick "not this"). */
  forbidden: readonly ForbiddenAccess[];
  /**
   * Roles, ClusterRoles and their bindings: when given, only what they grant the user is allowed,
   * as under the RBAC authorizer (resourceNames included); when absent, everything is.
   */
  rbac?: readonly JsonObject[];
}

/** What the authorizer is asked about a resource request (k8s.io/apiserver authorizer.Attributes). */
export interface AccessRequest {
  verb: string;
  type: ResourceType;
  namespace?: string;
  /** Empty for a collection, except a list by a `metadata.name` field selector. */
  name: string;
}

/** Whether the rules refuse the request (RBAC has no deny rules: a missing grant is a refusal). */
function denied(rules: AccessRules, user: string, request: AccessRequest): boolean {
  const { verb, type, namespace, name } = request;
  const refused = rules.forbidden.some(
    (rule) => rule.verb === verb && rule.resource === type.resource && (rule.namespace === undefined || rule.namespace === namespace),
  );
  return (
    refused ||
    (rules.rbac !== undefined &&
      !rbacAllows(rules.rbac, user, {
        verb,
        group: type.group,
        resource: type.resource,
        name,
        ...(namespace !== undefined ? { namespace } : {}),
      }))
  );
}

/**
 * Throws the 403 the API server's authorization filter answers, before the request reaches the
 * resource's handler (so also for an object that does not exist): `secrets is forbidden: User "u"
 * cannot list resource "secrets" in API group "" in the namespace "apps"`, the name quoted after
 * the resource when there is one (responsewriters.forbiddenMessage with RBAC's empty reason).
 */
export function authorize(rules: AccessRules, user: string, request: AccessRequest): void {
  if (!denied(rules, user, request)) return;
  const { verb, type, namespace, name } = request;
  const scope = namespace !== undefined ? `in the namespace ${JSON.stringify(namespace)}` : 'at the cluster scope';
  const why = `User ${JSON.stringify(user)} cannot ${verb} resource ${JSON.stringify(type.resource)} in API group ${JSON.stringify(type.group)} ${scope}`;
  throw forbidden({ group: type.group, resource: type.resource }, name, why);
}

/**
 * The second authorization of a PATCH (server-side apply) or PUT that creates its object: the filter
 * let the request in as `patch` or `update`, and the handler asks again for `create` once it knows
 * the object is new (handlers' withAuthorization), with the object's name, so `patch` alone cannot
 * create, and `create` restricted by resourceNames can. The refusal is errors.NewForbidden with the
 * authorizer's reason, which RBAC leaves empty: `secrets "x" is forbidden: `. It comes after the
 * object is validated, as the registry runs it as createValidation.
 */
export function authorizeCreateOnWrite(rules: AccessRules, user: string, request: Omit<AccessRequest, 'verb'>): void {
  const { type, name } = request;
  if (denied(rules, user, { ...request, verb: 'create' })) throw forbidden({ group: type.group, resource: type.resource }, name, '');
}

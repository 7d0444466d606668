import { objectNameFor } from './names.js';

/**
 * token-rotator's own objects in a cluster: the Kubernetes state backend's Secrets and Leases. Their
 * names are computed here alone, for the backend that reads and writes them, for the sink that must
 * never write them, and for `token-rotator rbac`, which grants access to exactly these names.
 */

/** On each of them: `state` (a name's record and journal entry), `index` (see JOURNAL_INDEX_NAME), `lock` (a Lease). */
export const ROLE_LABEL = 'token-rotator.io/role';
/** The exact token name an object belongs to: the object name carries only a folded form and a hash of it. */
export const TOKEN_NAME_ANNOTATION = 'token-rotator.io/token-name';

const STATE_PREFIX = 'token-rotator-state';
const LOCK_PREFIX = 'token-rotator-lock';

/** The Secret that holds a name's record and journal entry. */
export const stateObjectName = (name: string) => objectNameFor(STATE_PREFIX, name);
/** The Lease that keeps two processes from rotating a name at once. */
export const leaseObjectName = (name: string) => objectNameFor(LOCK_PREFIX, name);
/**
 * The Secret that lists the names that may have an unfinished rotation, so that one whose name left
 * the policy is found by reading named objects only: no LIST, which would read every Secret of the
 * namespace. No token name maps here: objectNameFor always ends in a hex hash.
 */
export const JOURNAL_INDEX_NAME = `${STATE_PREFIX}-index`;

/**
 * Why no sink may give a Secret this name, whatever its namespace; undefined when it may. Every
 * namespace, not only the state namespace of this run: that is a runtime setting (the pod's own
 * namespace, ROTATOR_STATE_NAMESPACE, a kubeconfig context) that `validate` on another machine does
 * not see, and other rotators (other policies, other teams) keep their state in namespaces of their own.
 */
export function reservedNameReason(name: string): string | undefined {
  const prefix = [STATE_PREFIX, LOCK_PREFIX].find((p) => name.startsWith(`${p}-`));
  return prefix
    ? `${prefix}-* is where token-rotator keeps its own state (a name's record, journal entry and staged secret, its Lease), which no sink may write: name another Secret`
    : undefined;
}

/** Why this object is token-rotator's own (its role label, or a reserved name); undefined when it is not. */
export function rotatorObjectReason(metadata: { name?: string; labels?: Record<string, string> } | undefined): string | undefined {
  const role = metadata?.labels?.[ROLE_LABEL];
  if (role !== undefined) {
    return `is token-rotator's own ${role} object (label ${ROLE_LABEL}=${role}), which no sink may write or adopt (adopt: true or not): name another Secret`;
  }
  const reserved = metadata?.name === undefined ? undefined : reservedNameReason(metadata.name);
  return reserved ? `has a reserved name: ${reserved}` : undefined;
}

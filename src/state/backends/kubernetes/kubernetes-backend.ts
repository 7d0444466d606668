import { parseDuration } from '../../../common/duration.js';
import type { Env } from '../../../common/env-variables.js';
import { STATE_KEY_HELP } from '../../../common/state-key.js';
import type { ConfigIssue } from '../../../errors.js';
import { defaultNamespace } from '../../../kubernetes/connection.js';
import { namespaceNameProblem } from '../../../kubernetes/names.js';
import type { StateBackendType } from '../../state-backend.js';
import { DEFAULT_LEASE_TIMING, type LeaseTiming, leaseTiming, MAX_LEASE_MS, MIN_LEASE_MS } from './lease-rules.js';

/** The namespace of the state: ROTATOR_STATE_NAMESPACE, else the rotator's own (in cluster) or the context's. */
function stateNamespace(env: Env): string | undefined {
  return env.ROTATOR_STATE_NAMESPACE || defaultNamespace(env);
}

/** client-go's defaults, or ROTATOR_LEASE_DURATION with client-go's proportions (checked at start). */
function leaseTimingFrom(env: Env): LeaseTiming {
  const given = env.ROTATOR_LEASE_DURATION ? parseDuration(env.ROTATOR_LEASE_DURATION) : undefined;
  return given?.ok ? leaseTiming(given.ms) : DEFAULT_LEASE_TIMING;
}

/**
 * Secrets and Leases in a namespace: `token-rotator-state-<name>` holds a name's record and journal
 * entry, `token-rotator-lock-<name>` is its Lease, and `token-rotator-state-index` lists the names
 * that may have a journal entry. Each is read by its name, never found by a LIST, so the Role can
 * name every object (see `token-rotator rbac`). Nothing on this machine's disk, so a CronJob needs
 * no volume. The code (and its HTTP client) loads only when this backend is chosen.
 */
export const kubernetesStateBackend: StateBackendType = {
  summary: 'Secrets and Leases in ROTATOR_STATE_NAMESPACE (default: the rotator’s own namespace)',

  check({ env, hasStateKey, sealsSecrets }) {
    const issues: ConfigIssue[] = [];
    const problem = env.ROTATOR_STATE_NAMESPACE ? namespaceNameProblem(env.ROTATOR_STATE_NAMESPACE) : undefined;
    if (problem) {
      issues.push({ path: 'env.ROTATOR_STATE_NAMESPACE', message: problem });
    } else if (!stateNamespace(env)) {
      issues.push({
        path: 'env.ROTATOR_STATE_NAMESPACE',
        message: 'required here: not in a cluster, and no kubeconfig context (KUBECONFIG or ~/.kube/config) to take a namespace from',
      });
    }
    const lease = env.ROTATOR_LEASE_DURATION ? parseDuration(env.ROTATOR_LEASE_DURATION) : undefined;
    if (lease && !lease.ok) issues.push({ path: 'env.ROTATOR_LEASE_DURATION', message: lease.message });
    else if (lease && (lease.ms < MIN_LEASE_MS || lease.ms > MAX_LEASE_MS)) {
      issues.push({ path: 'env.ROTATOR_LEASE_DURATION', message: 'must be from 3s to 10m' });
    }
    if (!hasStateKey && sealsSecrets !== false) {
      issues.push({
        path: 'env.ROTATOR_STATE_KEY',
        message: `required with ROTATOR_STATE_BACKEND=kubernetes: a new secret waits in a Secret until every sink has it, and is sealed with this key; ${STATE_KEY_HELP}`,
      });
    }
    return issues;
  },

  where: ({ env }) => `kubernetes namespace ${stateNamespace(env) ?? '(none)'}: Secrets token-rotator-state-*, Leases token-rotator-lock-*`,

  async open({ env, clock, logger }) {
    const [{ kubernetesClient }, { kubernetesStateObjects }, { leaseNameLocks }] = await Promise.all([
      import('../../../kubernetes/client.js'),
      import('./state-objects.js'),
      import('./lease-locks.js'),
    ]);
    const api = await kubernetesClient(env, logger);
    const namespace = env.ROTATOR_STATE_NAMESPACE || api.namespace;
    const objects = kubernetesStateObjects(api, namespace);
    return {
      describe: () => `kubernetes namespace ${namespace} (${api.describe})`,
      state: objects.state,
      journal: objects.journal,
      locks: leaseNameLocks(api, namespace, { clock, logger, timing: leaseTimingFrom(env) }),
    };
  },
};

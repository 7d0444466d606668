import { resolve } from 'node:path';

import { readEnvironment } from '../../config/env.js';
import { loadPolicy } from '../../config/load-policy.js';
import type { Policy } from '../../config/types.js';
import { ConfigError, type ConfigIssue } from '../../errors.js';
import { defaultNamespace } from '../../kubernetes/connection.js';
import { withDefaultNamespace } from '../../kubernetes/default-namespace.js';
import { namespaceNameProblem, OBJECT_NAME } from '../../kubernetes/names.js';
import { leastPrivilegeRoles } from '../../rbac/least-privilege.js';
import { roleObjects, rolesYaml } from '../../rbac/role-objects.js';
import { isStateBackendName, stateBackends } from '../../state/backends/registry.js';
import { type CliIo, EXIT } from '../io.js';
import { DEFAULT_POLICY_PATH, type GlobalOptions } from '../load-runtime.js';
import { envelope, toJson } from '../output/envelope.js';

export interface RbacOptions extends GlobalOptions {
  /** The rotator's own namespace: its ServiceAccount's, and what names no namespace means. */
  namespace?: string;
  serviceAccount?: string;
  json?: boolean;
}

export const DEFAULT_SERVICE_ACCOUNT = 'token-rotator';

/** A namespace given on the command line or in the environment, checked as the API server would. */
function checkNamespace(path: string, value: string | undefined, issues: ConfigIssue[]): void {
  const problem = value === undefined ? undefined : namespaceNameProblem(value);
  if (problem) issues.push({ path, message: problem });
}

/**
 * The Roles and RoleBindings the rotator needs for this policy, with nothing more: the state's
 * objects and the sinks' Secrets by name, the reloads' workloads by name. Reads the policy and the
 * environment only (no network, no credentials): exit 0 with the YAML (or --json) on stdout, or 2.
 */
export async function rbacCommand(options: RbacOptions, io: CliIo): Promise<number> {
  const env = readEnvironment(io.env, { envFile: options.dotenv, cwd: io.cwd });
  const issues: ConfigIssue[] = [];
  const namespace = options.namespace ?? defaultNamespace(env);
  checkNamespace('--namespace', options.namespace, issues);
  if (namespace === undefined) {
    issues.push({
      path: '--namespace',
      message: "required here: not in a cluster, and no kubeconfig context to take the rotator's namespace from",
    });
  }
  const serviceAccount = options.serviceAccount ?? DEFAULT_SERVICE_ACCOUNT;
  // The Roles are named after it: `<name>-deliver` must still be an object name.
  if (serviceAccount.length > 240 || !OBJECT_NAME.test(serviceAccount)) {
    issues.push({ path: '--service-account', message: 'must be a ServiceAccount name: lowercase letters, digits, "-" and "."' });
  }
  const backend = env.ROTATOR_STATE_BACKEND || 'file';
  if (!isStateBackendName(backend)) {
    issues.push({ path: 'env.ROTATOR_STATE_BACKEND', message: `must be one of: ${Object.keys(stateBackends).join(', ')}` });
  }
  checkNamespace('env.ROTATOR_STATE_NAMESPACE', env.ROTATOR_STATE_NAMESPACE || undefined, issues);
  const eventsSetting = env.ROTATOR_KUBERNETES_EVENTS || 'on';
  if (eventsSetting !== 'on' && eventsSetting !== 'off')
    issues.push({ path: 'env.ROTATOR_KUBERNETES_EVENTS', message: 'must be one of: on, off' });

  const policyPath = resolve(io.cwd, options.config ?? (env.ROTATOR_CONFIG || DEFAULT_POLICY_PATH));
  let policy: Policy | undefined;
  try {
    // As the rotator's pod will read it: a sink or reload that names no namespace means the pod's own.
    // Only its shape: the variables it names (credentials, URLs) are the pod's, not needed here.
    policy = await loadPolicy(policyPath, { env: namespace === undefined ? env : withDefaultNamespace(env, namespace) });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    issues.push(...error.issues);
  }
  if (issues.length > 0 || !policy || namespace === undefined) throw new ConfigError(issues);

  const stateNamespace = backend === 'kubernetes' ? env.ROTATOR_STATE_NAMESPACE || namespace : undefined;
  const specs = leastPrivilegeRoles(policy.tokens, stateNamespace, { events: eventsSetting !== 'off' });
  const account = { name: serviceAccount, namespace };
  if (options.json) {
    const summary = {
      serviceAccount: `${namespace}/${serviceAccount}`,
      stateBackend: backend,
      stateNamespace: stateNamespace ?? null,
      namespaces: [...new Set(specs.map((s) => s.namespace))],
    };
    const objects = roleObjects(specs, account);
    // Generated, not checked: nothing in it is for a person to look into.
    io.stdout.write(toJson(envelope('Rbac', { ...summary, total: objects.length, needsAttention: 0 }, objects)));
  } else {
    io.stdout.write(rolesYaml(specs, account));
  }
  return EXIT.ok;
}

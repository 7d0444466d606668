import { dirname, resolve } from 'node:path';

import { type Env } from '../common/env-variables.js';
import { checkReferences, type Reference } from '../common/reference.js';
import {
  type LocalSettings,
  type LogLevel,
  readEnvironment,
  readLocalSettings,
  readServiceSettings,
  type ServiceSettings,
  type Settings,
} from '../config/env.js';
import { withPositions } from '../config/issue-positions.js';
import { parsePolicy } from '../config/load-policy.js';
import { passEnvReferenceIssues } from '../config/pass-env-references.js';
import { readPolicyText } from '../config/policy-text.js';
import type { Policy } from '../config/types.js';
import { unknownRotatorVariables, type UnknownVariable, withTypoHints } from '../config/unknown-variables.js';
import { AuthError, ConfigError, type ConfigIssue } from '../errors.js';
import { createLogger } from '../log/logger.js';
import type { NotificationTarget } from '../notify/notifier.js';
import { reloadReferences } from '../reload/registry.js';
import { sinkReferences } from '../sinks/registry.js';
import { isStateBackendName, type StateBackendName, stateBackends } from '../state/backends/registry.js';
import type { StateBackendType } from '../state/state-backend.js';
import { checkSinkLocations } from './check-sink-locations.js';
import { DEFAULT_POLICY_PATH } from './policy-path.js';

export { DEFAULT_POLICY_PATH };

export interface GlobalOptions {
  config?: string;
  /** A dotenv file to read variables from. Not `--env-file`: Node.js takes that option for itself. */
  dotenv?: string;
  /**
   * `unused` for a command that neither calls the token service nor sends notices (`status` reads
   * only state and sinks): the service's URL and credentials, and the notification URLs, are then
   * not required. Anything that reaches for them anyway gets the configuration error then.
   */
  service?: 'required' | 'unused';
  /**
   * `unused` for a command that stages and unseals no secret (`status`, `state forget`): a backend
   * that requires ROTATOR_STATE_KEY to keep a staged secret does not require it of them.
   */
  stateSecrets?: 'used' | 'unused';
  /** The log level when ROTATOR_LOG_LEVEL is not set, if not info (see one-shot-log-level.ts). */
  defaultLogLevel?: LogLevel | undefined;
}

export interface Runtime {
  env: Env;
  settings: Settings;
  policy: Policy;
  /** Webhook targets, resolved from the environment; none when the policy has no notifications. */
  notificationTargets: NotificationTarget[];
  /** Where the policy was read from, to read it again on SIGHUP. */
  policyPath: string;
  /** Files the environment was read from (the dotenv file, every `*_FILE`): no sink may write them. */
  environmentFiles: string[];
  cwd: string;
}

/** Collects the ConfigErrors `load` throws into `issues`; anything else is not a configuration problem. */
async function collect<T>(issues: ConfigIssue[], load: () => T | Promise<T>): Promise<T | undefined> {
  try {
    return await load();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    issues.push(...error.issues);
    return undefined;
  }
}

/** The files this environment was read from, resolved: the dotenv file and every `NAME_FILE`. */
function environmentFilesOf(env: Env, dotenv: string | undefined, cwd: string): string[] {
  const files = Object.entries(env)
    .filter(([name, value]) => name.endsWith('_FILE') && value)
    .map(([, value]) => resolve(cwd, value!));
  return dotenv ? [resolve(cwd, dotenv), ...files] : files;
}

/**
 * Everything a command needs before it may touch the network: the environment and the policy,
 * checked together so that one run reports every problem, each with its path.
 */
export async function loadRuntime(options: GlobalOptions, io: { env: Env; cwd: string }): Promise<Runtime> {
  const env = readEnvironment(io.env, { envFile: options.dotenv, cwd: io.cwd });
  const issues: ConfigIssue[] = [];
  const policyPath = resolve(io.cwd, options.config ?? (env.ROTATOR_CONFIG || DEFAULT_POLICY_PATH));
  const serviceUsed = options.service !== 'unused';
  const service = serviceUsed ? await collect(issues, () => readServiceSettings(env)) : deferredService(env);
  const read = await collect(issues, () => readLocalSettings(env, io.cwd, dirname(policyPath)));
  const local = read && options.defaultLogLevel && !env.ROTATOR_LOG_LEVEL ? { ...read, logLevel: options.defaultLogLevel } : read;
  const settings = service && local ? withService(local, service) : undefined;
  if (local && !isStateBackendName(local.stateBackend)) {
    issues.push({ path: 'env.ROTATOR_STATE_BACKEND', message: `must be one of: ${Object.keys(stateBackends).join(', ')}` });
  } else if (local) {
    const backend: StateBackendType = stateBackends[local.stateBackend as StateBackendName];
    const sealsSecrets = options.stateSecrets !== 'unused';
    issues.push(...(backend.check?.({ dir: local.stateDir, env, hasStateKey: local.stateKey !== undefined, sealsSecrets }) ?? []));
  }
  if (serviceUsed && service?.auth.kind === 'oauth' && service.auth.privateKey) {
    const key = service.auth.privateKey;
    await collect(issues, async () => {
      try {
        // jose, only for a private_key_jwt client.
        const { importClientPrivateKey } = await import('../auth/private-key.js');
        await importClientPrivateKey(key);
      } catch (error) {
        if (error instanceof AuthError) throw new ConfigError([{ path: 'env.ROTATOR_OAUTH_PRIVATE_KEY', message: error.message }]);
        throw error;
      }
    });
  }
  const environmentFiles = environmentFilesOf(env, options.dotenv ?? '.env', io.cwd);
  const checked = await collect(issues, () =>
    checkPolicy(policyPath, { env, settings: local, environmentFiles, cwd: io.cwd, notifications: serviceUsed }),
  );
  const unknown = unknownVariablesOf(env, io.env, options.dotenv ?? '.env', checked?.policy);
  if (issues.length > 0 || !settings || !checked) throw new ConfigError(withTypoHints(issues, unknown), { policyFile: policyPath });
  if (checked.policy.warnings.length > 0 || unknown.length > 0) {
    const logger = createLogger({ level: local!.logLevel });
    for (const warning of checked.policy.warnings) logger.warn({ path: warning.path, policy: policyPath }, warning.message);
    // Warned, not refused: a variable meant for another tool, or one a newer version reads, must not stop a rotation.
    for (const variable of unknown) logger.warn({ variable: variable.name, where: variable.where }, variable.message);
  }
  return { env, settings, ...checked, policyPath, environmentFiles, cwd: io.cwd };
}

/**
 * The service settings of a command that does not use them: read if they are right, and otherwise
 * a stand-in whose every field throws the configuration error, so that a command that reaches for
 * them by mistake still fails with exit 2 naming the variable, never with a request half-configured.
 */
function deferredService(env: Env): ServiceSettings {
  try {
    return readServiceSettings(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const fail = (): never => {
      throw error;
    };
    return Object.defineProperties({} as ServiceSettings, {
      apiUrl: { get: fail, enumerable: true },
      auth: { get: fail, enumerable: true },
      orgId: { get: fail, enumerable: true },
    });
  }
}

/** The two halves as one object, without reading the service half's fields (they may throw). */
function withService(local: LocalSettings, service: ServiceSettings): Settings {
  return Object.defineProperties({ ...local } as Settings, Object.getOwnPropertyDescriptors(service));
}

/**
 * The policy file read and checked against the environment: its schema, its notification targets,
 * and where its sinks write. `validate`, every command, and the daemon's reload all go through this
 * one function, so a policy `validate` rejects is rejected everywhere.
 */
export async function checkPolicy(
  policyPath: string,
  context: {
    env: Env;
    settings: LocalSettings | undefined;
    environmentFiles: string[];
    cwd: string;
    /** false: the command sends no notices, so their URLs need not be set (`status`). */
    notifications?: boolean;
  },
): Promise<{ policy: Policy; notificationTargets: NotificationTarget[] }> {
  const issues: ConfigIssue[] = [];
  const file = resolve(policyPath);
  const text = await collect(issues, () => readPolicyText(policyPath, file));
  const policy = text === undefined ? undefined : await collect(issues, () => parsePolicy(text, file, { env: context.env }));
  if (policy) {
    // The notifier (and got, its HTTP client) is loaded only for a policy that has notifications.
    const notifications =
      context.notifications === false || policy.notifications.length === 0
        ? { targets: [], issues: [] }
        : (await import('../notify/notifier.js')).resolveTargets(policy.notifications, context.env, context.cwd);
    issues.push(...notifications.issues);
    const unique = policyReferences(policy);
    issues.push(...checkReferences(unique, context.env, context.cwd));
    issues.push(...passEnvReferenceIssues(policy, unique));
    if (context.settings) {
      issues.push(...checkSinkLocations(policy, { stateDir: context.settings.stateDir, environmentFiles: context.environmentFiles }));
    }
    if (issues.length === 0) return { policy, notificationTargets: notifications.targets };
  }
  throw new ConfigError(text === undefined ? issues : withPositions(issues, text), { policyFile: file });
}

/** The variables the policy's sinks and reloads take credentials from, each with where it is written. */
function policyReferences(policy: Policy): Reference[] {
  const references = policy.tokens.flatMap((token, t) => [
    ...token.sinks.flatMap((sink, s) => sinkReferences(sink).map((r) => ({ ...r, path: `tokens[${t}].sinks[${s}].${r.path}` }))),
    ...token.reload.flatMap((reload, r) =>
      reloadReferences(reload).map((ref) => ({ ...ref, path: `${token.reloadAt}[${r}].${ref.path}` })),
    ),
  ]);
  // A reload in `defaults` is every token's: its problem is one problem.
  return [...new Map(references.map((r) => [r.path, r])).values()];
}

/** The `ROTATOR_*` variables set in the environment or the dotenv file that nothing reads, the policy's references aside. */
function unknownVariablesOf(env: Env, given: Env, dotenv: string, policy: Policy | undefined): UnknownVariable[] {
  const referenced = new Set(
    policy ? [...policyReferences(policy).map((r) => r.variable), ...policy.notifications.map((n) => n.urlFrom)] : [],
  );
  // What the merged environment has and the process's does not came from the dotenv file.
  const fromFile = Object.keys(env).filter((name) => !(name in given));
  return unknownRotatorVariables({ environment: Object.keys(given), dotenv: { file: dotenv, names: fromFile } }, referenced);
}

/** The policy read again as at start, with the environment read at start. */
export function reloadRuntime(runtime: Runtime): Promise<{ policy: Policy; notificationTargets: NotificationTarget[] }> {
  return checkPolicy(runtime.policyPath, {
    env: runtime.env,
    settings: runtime.settings,
    environmentFiles: runtime.environmentFiles,
    cwd: runtime.cwd,
  });
}

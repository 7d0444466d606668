import { resolve } from 'node:path';

import { importClientPrivateKey } from '../auth/private-key.js';
import { type Env, readEnvironment, readSettings, type Settings } from '../config/env.js';
import { loadPolicy } from '../config/load-policy.js';
import type { Policy } from '../config/types.js';
import { AuthError, ConfigError, type ConfigIssue } from '../errors.js';
import { type NotificationTarget, resolveTargets } from '../notify/notifier.js';

export const DEFAULT_POLICY_PATH = 'config/rotation.yaml';

export interface GlobalOptions {
  config?: string;
  /** A dotenv file to read variables from. Not `--env-file`: Node.js takes that option for itself. */
  dotenv?: string;
}

export interface Runtime {
  env: Env;
  settings: Settings;
  policy: Policy;
  /** Webhook targets, resolved from the environment; none when the policy has no notifications. */
  notificationTargets: NotificationTarget[];
}

/**
 * Everything a command needs before it may touch the network: the environment and the policy,
 * checked together so that one run reports every problem, each with its path.
 */
export async function loadRuntime(options: GlobalOptions, io: { env: Env; cwd: string }): Promise<Runtime> {
  const env = readEnvironment(io.env, { envFile: options.dotenv, cwd: io.cwd });
  const issues: ConfigIssue[] = [];
  const collect = async <T>(load: () => T | Promise<T>): Promise<T | undefined> => {
    try {
      return await load();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      issues.push(...error.issues);
      return undefined;
    }
  };
  const settings = await collect(() => readSettings(env, io.cwd));
  const policyPath = resolve(io.cwd, options.config ?? (env.ROTATOR_CONFIG || DEFAULT_POLICY_PATH));
  const policy = await collect(() => loadPolicy(policyPath));
  if (settings?.auth.kind === 'oauth' && settings.auth.privateKey) {
    const key = settings.auth.privateKey;
    await collect(async () => {
      try {
        await importClientPrivateKey(key);
      } catch (error) {
        if (error instanceof AuthError) throw new ConfigError([{ path: 'env.ROTATOR_OAUTH_PRIVATE_KEY', message: error.message }]);
        throw error;
      }
    });
  }
  const notifications = policy ? resolveTargets(policy.notifications, env, io.cwd) : { targets: [], issues: [] };
  issues.push(...notifications.issues);
  if (issues.length > 0 || !settings || !policy) throw new ConfigError(issues);
  return { env, settings, policy, notificationTargets: notifications.targets };
}

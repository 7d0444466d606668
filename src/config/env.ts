import type { KeyObject } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';

import { parse as parseDotenv } from 'dotenv';

import { AUTH_METHODS, type AuthSettings } from '../auth/auth-settings.js';
import { parseDuration } from '../common/duration.js';
import { type Env, readVariable } from '../common/env-variables.js';
import { isLoopbackHost } from '../common/loopback.js';
import { parseStateKey } from '../common/state-key.js';
import { ConfigError, type ConfigIssue } from '../errors.js';
import { Secret } from '../secret.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** What a command needs to reach the token service: only commands that call it require these. */
export interface ServiceSettings {
  apiUrl: URL;
  auth: AuthSettings;
  orgId: string | undefined;
}

/** What every command needs, the ones that only read state and sinks (`status`) included. */
export interface LocalSettings {
  /**
   * `ROTATOR_STATE_DIR`, else `.token-rotator` beside the policy file: state follows the policy, as
   * sink paths do, whatever folder a run starts in.
   */
  stateDir: string;
  /** `ROTATOR_STATE_BACKEND`: which backend keeps the state; checked against the backends there are. */
  stateBackend: string;
  logLevel: LogLevel;
  httpTimeoutMs: number;
  concurrency: number;
  /** Seals staged and current secrets in state (AES-256-GCM); without it they are plain in 0600 files. */
  stateKey: KeyObject | undefined;
  /**
   * `ROTATOR_STATE_KEY_PREVIOUS` (comma-separated): keys that only open what they sealed; it is
   * sealed again with the current key at its name's next write.
   */
  previousStateKeys: KeyObject[];
  /**
   * `none` among `ROTATOR_STATE_KEY_PREVIOUS`: state that no key authenticates (written without a
   * key, or before state authentication) is accepted for this run and authenticated at its next
   * write. Refused otherwise, since anyone who can write the state could have planted it.
   */
  acceptUnauthenticatedState: boolean;
  /** `ROTATOR_KUBERNETES_EVENTS` (on by default): Kubernetes Events on the Secrets and workloads of each outcome. */
  kubernetesEvents: boolean;
}

export type Settings = ServiceSettings & LocalSettings;

/** The state folder's name beside the policy file, when ROTATOR_STATE_DIR does not say. */
export const DEFAULT_STATE_FOLDER = '.token-rotator';

/** Every variable this tool reads; each also accepted as `NAME_FILE` (a path to read it from). */
export const VARIABLES = [
  'ROTATOR_CONFIG',
  'ROTATOR_API_URL',
  'ROTATOR_OAUTH_ISSUER',
  'ROTATOR_OAUTH_TOKEN_URL',
  'ROTATOR_OAUTH_CLIENT_ID',
  'ROTATOR_OAUTH_CLIENT_SECRET',
  'ROTATOR_OAUTH_SCOPE',
  'ROTATOR_OAUTH_RESOURCE',
  'ROTATOR_OAUTH_AUTH_METHOD',
  'ROTATOR_OAUTH_PRIVATE_KEY',
  'ROTATOR_ACCESS_TOKEN',
  'ROTATOR_ORG_ID',
  'ROTATOR_STATE_DIR',
  'ROTATOR_STATE_BACKEND',
  'ROTATOR_STATE_KEY',
  'ROTATOR_STATE_KEY_PREVIOUS',
  'ROTATOR_STATE_NAMESPACE',
  'ROTATOR_LEASE_DURATION',
  'ROTATOR_KUBERNETES_EVENTS',
  'ROTATOR_LOG_LEVEL',
  'ROTATOR_LOG_FORMAT',
  'ROTATOR_HTTP_TIMEOUT',
  'ROTATOR_CONCURRENCY',
  'ROTATOR_LISTEN',
] as const;

/**
 * The environment as this process sees it: the env file's values under the real environment (a
 * variable set in the environment wins, as with dotenv), then every `NAME_FILE` read in place of
 * `NAME`. The file is read only when given or when `./.env` exists.
 */
export function readEnvironment(env: Env, options: { envFile: string | undefined; cwd: string }): Env {
  const issues: ConfigIssue[] = [];
  let fromFile: Record<string, string> = {};
  const envFile = options.envFile ?? (existsSync(resolve(options.cwd, '.env')) ? '.env' : undefined);
  if (envFile !== undefined) {
    try {
      fromFile = parseDotenv(readFileSync(resolve(options.cwd, envFile)));
    } catch (error) {
      issues.push({ path: `--dotenv ${envFile}`, message: `cannot read: ${(error as NodeJS.ErrnoException).code ?? error}` });
    }
  }
  const merged: Record<string, string | undefined> = { ...fromFile, ...env };
  for (const name of VARIABLES) {
    const read = readVariable(merged, name, options.cwd);
    if ('issue' in read) issues.push(read.issue);
    else merged[name] = read.value;
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return merged;
}

/** Plain http would send the access token and the new secrets in clear; only loopback may use it. */
function readUrl(env: Env, name: string, issues: ConfigIssue[], required: boolean): URL | undefined {
  const value = env[name];
  if (value === undefined || value === '') {
    if (required) issues.push({ path: `env.${name}`, message: 'required' });
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    issues.push({ path: `env.${name}`, message: 'not a URL; expected https://host[:port][/path]' });
    return undefined;
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    issues.push({
      path: `env.${name}`,
      message: `plain http:// is only allowed for loopback hosts (127.0.0.1, ::1, localhost); use https://`,
    });
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    issues.push({ path: `env.${name}`, message: `must be an https:// URL` });
    return undefined;
  }
  if (url.username || url.password) {
    issues.push({ path: `env.${name}`, message: 'must not carry credentials' });
    return undefined;
  }
  return url;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T, issues: ConfigIssue[]): T {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  issues.push({ path: `env.${name}`, message: `must be one of: ${allowed.join(', ')}` });
  return fallback;
}

const present = (env: Env, name: string) => env[name] !== undefined && env[name] !== '';

function readAuth(env: Env, issues: ConfigIssue[]): AuthSettings | undefined {
  const oauthVars = VARIABLES.filter((v) => v.startsWith('ROTATOR_OAUTH_') && present(env, v));
  if (present(env, 'ROTATOR_ACCESS_TOKEN')) {
    if (oauthVars.length > 0) {
      issues.push({
        path: 'env.ROTATOR_ACCESS_TOKEN',
        message: `set either a static access token or OAuth (${oauthVars.join(', ')}), not both`,
      });
      return undefined;
    }
    return { kind: 'static', accessToken: new Secret(env.ROTATOR_ACCESS_TOKEN!) };
  }
  const before = issues.length;
  const issuer = readUrl(env, 'ROTATOR_OAUTH_ISSUER', issues, false);
  const tokenUrl = readUrl(env, 'ROTATOR_OAUTH_TOKEN_URL', issues, false);
  if (!present(env, 'ROTATOR_OAUTH_ISSUER') && !present(env, 'ROTATOR_OAUTH_TOKEN_URL')) {
    issues.push({
      path: 'env',
      message:
        'no credentials: set ROTATOR_OAUTH_ISSUER or ROTATOR_OAUTH_TOKEN_URL with ROTATOR_OAUTH_CLIENT_ID and ROTATOR_OAUTH_CLIENT_SECRET, or ROTATOR_ACCESS_TOKEN',
    });
    return undefined;
  }
  if (present(env, 'ROTATOR_OAUTH_ISSUER') && present(env, 'ROTATOR_OAUTH_TOKEN_URL')) {
    issues.push({
      path: 'env.ROTATOR_OAUTH_TOKEN_URL',
      message: 'set either ROTATOR_OAUTH_ISSUER (discovery) or ROTATOR_OAUTH_TOKEN_URL, not both',
    });
  }
  const clientId = env.ROTATOR_OAUTH_CLIENT_ID;
  if (!clientId) issues.push({ path: 'env.ROTATOR_OAUTH_CLIENT_ID', message: 'required with OAuth' });
  const method = oneOf(env, 'ROTATOR_OAUTH_AUTH_METHOD', AUTH_METHODS, 'client_secret_basic', issues);
  const clientSecret = present(env, 'ROTATOR_OAUTH_CLIENT_SECRET') ? new Secret(env.ROTATOR_OAUTH_CLIENT_SECRET!) : undefined;
  const privateKey = present(env, 'ROTATOR_OAUTH_PRIVATE_KEY') ? new Secret(env.ROTATOR_OAUTH_PRIVATE_KEY!) : undefined;
  if (method === 'private_key_jwt') {
    if (!privateKey)
      issues.push({ path: 'env.ROTATOR_OAUTH_PRIVATE_KEY_FILE', message: 'required with ROTATOR_OAUTH_AUTH_METHOD=private_key_jwt' });
  } else if (!clientSecret) {
    issues.push({ path: 'env.ROTATOR_OAUTH_CLIENT_SECRET', message: `required with ${method} (or set ROTATOR_OAUTH_CLIENT_SECRET_FILE)` });
  }
  if (issues.length > before) return undefined;
  return {
    kind: 'oauth',
    issuer,
    tokenUrl,
    clientId: clientId!,
    method,
    clientSecret,
    privateKey,
    scope: env.ROTATOR_OAUTH_SCOPE || undefined,
    resource: env.ROTATOR_OAUTH_RESOURCE || undefined,
  };
}

function positiveInteger(env: Env, name: string, fallback: number, max: number, issues: ConfigIssue[]): number {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) {
    issues.push({ path: `env.${name}`, message: `must be a whole number from 1 to ${max}` });
    return fallback;
  }
  return n;
}

/**
 * The timeout is a timer, and Node fires a timer of more than 2^31-1 ms (about 24.8 days) after 1 ms,
 * which would fail every request. A request that needs more than 10 minutes is stuck anyway.
 */
const MAX_HTTP_TIMEOUT_MS = 10 * 60_000;

/** The service's address and credentials, every problem thrown together. No network. */
export function readServiceSettings(env: Env): ServiceSettings {
  const issues: ConfigIssue[] = [];
  const apiUrl = readUrl(env, 'ROTATOR_API_URL', issues, true);
  const auth = readAuth(env, issues);
  if (issues.length > 0 || !apiUrl || !auth) throw new ConfigError(issues);
  return { apiUrl, auth, orgId: env.ROTATOR_ORG_ID || undefined };
}

/** `ROTATOR_CONCURRENCY` when not set (see readLocalSettings). */
export const DEFAULT_CONCURRENCY = 16;

/** Everything but the service: state, logging, limits. Every problem thrown together. */
export function readLocalSettings(env: Env, cwd: string, policyDir: string = cwd): LocalSettings {
  const issues: ConfigIssue[] = [];
  const logLevel = oneOf(env, 'ROTATOR_LOG_LEVEL', LOG_LEVELS, 'info', issues);
  const kubernetesEvents = oneOf(env, 'ROTATOR_KUBERNETES_EVENTS', ['on', 'off'], 'on', issues) === 'on';
  let httpTimeoutMs = 30_000;
  if (present(env, 'ROTATOR_HTTP_TIMEOUT')) {
    const parsed = parseDuration(env.ROTATOR_HTTP_TIMEOUT!);
    if (!parsed.ok || parsed.ms < 1000 || parsed.ms > MAX_HTTP_TIMEOUT_MS)
      issues.push({ path: 'env.ROTATOR_HTTP_TIMEOUT', message: 'must be a duration from 1s to 10m, such as 30s' });
    else httpTimeoutMs = parsed.ms;
  }
  // Names handled at once. A rotation is three requests in a row (check, regenerate, verify), so
  // what a run takes is mostly round trips: 16 lanes hide them. The service's rate limit
  // (X-RateLimit-Limit, per minute) is kept by pacing every request by its headers, shared by all
  // lanes (src/api/rate-limit-pacer.ts), not by a low concurrency: under a tight limit the lanes wait
  // for X-RateLimit-Reset together, under a generous one they never wait.
  const concurrency = positiveInteger(env, 'ROTATOR_CONCURRENCY', DEFAULT_CONCURRENCY, 64, issues);
  let stateKey: KeyObject | undefined;
  if (present(env, 'ROTATOR_STATE_KEY')) {
    const parsed = parseStateKey(env.ROTATOR_STATE_KEY!);
    if (typeof parsed === 'string') issues.push({ path: 'env.ROTATOR_STATE_KEY', message: parsed });
    else stateKey = parsed;
  }
  const { keys: previousStateKeys, none: acceptUnauthenticatedState } = readPreviousStateKeys(env, issues);
  if ((previousStateKeys.length > 0 || acceptUnauthenticatedState) && !present(env, 'ROTATOR_STATE_KEY')) {
    // What a run writes is sealed and authenticated with the current key: without one, state a
    // previous key opened would be written back unauthenticated, and refused by the next run.
    issues.push({
      path: 'env.ROTATOR_STATE_KEY_PREVIOUS',
      message: 'needs ROTATOR_STATE_KEY: previous keys (and none) only open what is stored, and the current key seals what is written',
    });
  }
  const stateDir = env.ROTATOR_STATE_DIR
    ? isAbsolute(env.ROTATOR_STATE_DIR)
      ? env.ROTATOR_STATE_DIR
      : resolve(cwd, env.ROTATOR_STATE_DIR)
    : join(policyDir, DEFAULT_STATE_FOLDER);
  if (issues.length > 0) throw new ConfigError(issues);
  const stateBackend = env.ROTATOR_STATE_BACKEND || 'file';
  return {
    stateDir,
    stateBackend,
    logLevel,
    httpTimeoutMs,
    concurrency,
    stateKey,
    previousStateKeys,
    acceptUnauthenticatedState,
    kubernetesEvents,
  };
}

/**
 * Every key of `ROTATOR_STATE_KEY_PREVIOUS`, each checked as the current key is, and whether it
 * names `none` (state no key authenticates); empty parts are ignored.
 */
function readPreviousStateKeys(env: Env, issues: ConfigIssue[]): { keys: KeyObject[]; none: boolean } {
  if (!present(env, 'ROTATOR_STATE_KEY_PREVIOUS')) return { keys: [], none: false };
  const keys: KeyObject[] = [];
  let none = false;
  const parts = env.ROTATOR_STATE_KEY_PREVIOUS!.split(',').map((part) => part.trim());
  parts.forEach((part, index) => {
    if (part === '') return;
    if (part === 'none') {
      none = true;
      return;
    }
    const parsed = parseStateKey(part);
    const path = parts.length > 1 ? `env.ROTATOR_STATE_KEY_PREVIOUS[${index}]` : 'env.ROTATOR_STATE_KEY_PREVIOUS';
    if (typeof parsed === 'string') issues.push({ path, message: parsed });
    else keys.push(parsed);
  });
  return { keys, none };
}

/** Checks the whole environment at once and throws every problem together. No network, no writes. */
export function readSettings(env: Env, cwd: string, policyDir: string = cwd): Settings {
  const issues: ConfigIssue[] = [];
  const service = collectIssues(issues, () => readServiceSettings(env));
  const local = collectIssues(issues, () => readLocalSettings(env, cwd, policyDir));
  if (!service || !local) throw new ConfigError(issues);
  return { ...service, ...local };
}

function collectIssues<T>(issues: ConfigIssue[], read: () => T): T | undefined {
  try {
    return read();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    issues.push(...error.issues);
    return undefined;
  }
}

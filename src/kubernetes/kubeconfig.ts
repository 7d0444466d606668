import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';

import { parse as parseYaml } from 'yaml';

import type { Env } from '../common/env-variables.js';
import { KubernetesError } from '../errors.js';

/** The parts of a kubeconfig's current context that reaching the API server needs. */
export interface KubeconfigContext {
  /** The context's name, for messages. */
  name: string;
  cluster: {
    server: string;
    /** PEM text, from `certificate-authority-data` or the file `certificate-authority` names. */
    certificateAuthority?: string;
    insecureSkipTlsVerify?: boolean;
    tlsServerName?: string;
  };
  user: {
    token?: string;
    tokenFile?: string;
    clientCertificate?: string;
    clientKey?: string;
    exec?: ExecConfig;
  };
  namespace: string | undefined;
}

/** `users[].user.exec`: a credential plugin, as kubectl runs it. */
export interface ExecConfig {
  apiVersion: string;
  command: string;
  args: string[];
  env: Array<{ name: string; value: string }>;
  /** Relative commands are relative to the kubeconfig file they were read from. */
  baseDir: string;
  installHint?: string;
  provideClusterInfo: boolean;
}

interface Named<T> {
  name: string;
  value: T;
  /** The folder of the file it came from: relative paths inside it are relative to that file. */
  baseDir: string;
}

type Raw = Record<string, unknown>;

/** The kubeconfig files kubectl reads: `KUBECONFIG` (a list), else `~/.kube/config`. */
export function kubeconfigPaths(env: Env): string[] {
  const list = env.KUBECONFIG?.split(delimiter).filter(Boolean);
  if (list && list.length > 0) return list;
  return [join(env.HOME || homedir(), '.kube', 'config')];
}

/**
 * The current context of the kubeconfig files, merged as kubectl merges them: for each cluster,
 * user and context name, and for `current-context`, the first file that sets it wins. Undefined
 * when no file exists; an error that names the file and the entry when what is there is unusable.
 */
export function loadKubeconfig(env: Env, read: (path: string) => string | undefined = readOptional): KubeconfigContext | undefined {
  const clusters = new Map<string, Named<Raw>>();
  const users = new Map<string, Named<Raw>>();
  const contexts = new Map<string, Named<Raw>>();
  let current: string | undefined;
  let found = false;
  for (const path of kubeconfigPaths(env)) {
    const text = read(path);
    if (text === undefined) continue;
    found = true;
    let doc: Raw;
    try {
      doc = (parseYaml(text) ?? {}) as Raw;
    } catch (error) {
      throw new KubernetesError(`kubeconfig ${path} is not YAML: ${(error as Error).message.split('\n')[0]}`);
    }
    const baseDir = dirname(resolve(path));
    collect(doc.clusters, 'cluster', clusters, baseDir);
    collect(doc.users, 'user', users, baseDir);
    collect(doc.contexts, 'context', contexts, baseDir);
    if (current === undefined && typeof doc['current-context'] === 'string' && doc['current-context']) current = doc['current-context'];
  }
  if (!found) return undefined;
  if (!current) throw new KubernetesError(`the kubeconfig (${kubeconfigPaths(env).join(', ')}) has no current-context`);
  const context = contexts.get(current);
  if (!context) throw new KubernetesError(`kubeconfig: the current context '${current}' is not defined`);
  const clusterName = String(context.value.cluster ?? '');
  const userName = String(context.value.user ?? '');
  const cluster = clusters.get(clusterName);
  if (!cluster) throw new KubernetesError(`kubeconfig: context '${current}' names the cluster '${clusterName}', which is not defined`);
  const user = users.get(userName);
  return {
    name: current,
    cluster: readCluster(cluster, current, read),
    user: user ? readUser(user, current, read) : {},
    namespace: typeof context.value.namespace === 'string' && context.value.namespace ? context.value.namespace : undefined,
  };
}

function collect(list: unknown, key: string, into: Map<string, Named<Raw>>, baseDir: string): void {
  if (!Array.isArray(list)) return;
  for (const item of list as Raw[]) {
    const name = typeof item?.name === 'string' ? item.name : undefined;
    if (name && !into.has(name) && item[key] && typeof item[key] === 'object') into.set(name, { name, value: item[key] as Raw, baseDir });
  }
}

function readCluster(
  { value, baseDir }: Named<Raw>,
  context: string,
  read: (path: string) => string | undefined,
): KubeconfigContext['cluster'] {
  const server = value.server;
  if (typeof server !== 'string' || !server) throw new KubernetesError(`kubeconfig: the cluster of context '${context}' has no server`);
  if (value['proxy-url'])
    throw new KubernetesError(`kubeconfig: context '${context}' uses proxy-url, which token-rotator does not support`);
  return {
    server,
    ...optional('certificateAuthority', fileOrData(value, 'certificate-authority', baseDir, context, read)),
    ...optional('insecureSkipTlsVerify', value['insecure-skip-tls-verify'] === true ? true : undefined),
    ...optional('tlsServerName', typeof value['tls-server-name'] === 'string' ? value['tls-server-name'] : undefined),
  };
}

function readUser({ value, baseDir }: Named<Raw>, context: string, read: (path: string) => string | undefined): KubeconfigContext['user'] {
  if (value['auth-provider']) {
    throw new KubernetesError(
      `kubeconfig: context '${context}' uses the removed auth-provider mechanism; use an exec credential plugin (such as kubelogin or gke-gcloud-auth-plugin)`,
    );
  }
  if (value.username || value.password)
    throw new KubernetesError(`kubeconfig: context '${context}' uses basic auth, which token-rotator does not support`);
  const exec = value.exec as Raw | undefined;
  return {
    ...optional('token', typeof value.token === 'string' && value.token ? value.token : undefined),
    ...optional('tokenFile', typeof value.tokenFile === 'string' && value.tokenFile ? absolute(value.tokenFile, baseDir) : undefined),
    ...optional('clientCertificate', fileOrData(value, 'client-certificate', baseDir, context, read)),
    ...optional('clientKey', fileOrData(value, 'client-key', baseDir, context, read)),
    ...optional('exec', exec ? readExec(exec, baseDir, context) : undefined),
  };
}

function readExec(exec: Raw, baseDir: string, context: string): ExecConfig {
  if (typeof exec.command !== 'string' || !exec.command)
    throw new KubernetesError(`kubeconfig: the exec plugin of context '${context}' has no command`);
  return {
    apiVersion: typeof exec.apiVersion === 'string' ? exec.apiVersion : 'client.authentication.k8s.io/v1',
    command: exec.command,
    args: Array.isArray(exec.args) ? exec.args.map(String) : [],
    env: Array.isArray(exec.env) ? (exec.env as Raw[]).map((e) => ({ name: String(e.name), value: String(e.value ?? '') })) : [],
    baseDir,
    ...optional('installHint', typeof exec.installHint === 'string' ? exec.installHint : undefined),
    provideClusterInfo: exec.provideClusterInfo === true,
  };
}

/** `<key>-data` (base64) or `<key>` (a path, relative to its kubeconfig file), as PEM text. */
function fileOrData(
  value: Raw,
  key: string,
  baseDir: string,
  context: string,
  read: (path: string) => string | undefined,
): string | undefined {
  const data = value[`${key}-data`];
  if (typeof data === 'string' && data) return Buffer.from(data, 'base64').toString('utf8');
  const path = value[key];
  if (typeof path !== 'string' || !path) return undefined;
  const text = read(absolute(path, baseDir));
  if (text === undefined) throw new KubernetesError(`kubeconfig: context '${context}' names ${key} ${path}, which cannot be read`);
  return text;
}

const absolute = (path: string, baseDir: string) => (isAbsolute(path) ? path : resolve(baseDir, path));

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

function readOptional(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new KubernetesError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code}`);
  }
}

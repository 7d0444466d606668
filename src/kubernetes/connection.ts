import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Env } from '../common/env-variables.js';
import { isLoopbackHost } from '../common/loopback.js';
import { KubernetesError } from '../errors.js';
import { type ExecConfig, loadKubeconfig } from './kubeconfig.js';

/** Where a pod finds its service account's token, CA and namespace. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** How to reach the API server and as whom: what kubectl would use here. */
export interface Connection {
  server: URL;
  /** PEM text of the CA that signs the API server's certificate; the system's otherwise. */
  certificateAuthority?: string;
  insecureSkipTlsVerify: boolean;
  tlsServerName?: string;
  /** The namespace to use when a configuration does not name one. */
  namespace: string;
  auth:
    | { kind: 'token-file'; path: string }
    | { kind: 'token'; token: string }
    | { kind: 'client-certificate'; certificate: string; key: string }
    | { kind: 'exec'; exec: ExecConfig }
    | { kind: 'none' };
  /** `in-cluster service account` or `kubeconfig context prod`: for messages. */
  describe: string;
}

export interface ConnectionOptions {
  /** Where the service account's files are; only tests set another. */
  serviceAccountDir?: string;
}

/**
 * As kubectl connects: in a pod, through its service account (no setting needed); elsewhere through
 * `KUBECONFIG` or `~/.kube/config` and its current context. Undefined when there is neither.
 */
export function resolveConnection(env: Env, options: ConnectionOptions = {}): Connection | undefined {
  const dir = options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  if (env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT && existsSync(join(dir, 'token'))) return inCluster(env, dir);
  const context = loadKubeconfig(env);
  if (!context) return undefined;
  const server = checkedServer(context.cluster.server, `kubeconfig context ${context.name}`);
  const { user } = context;
  const auth: Connection['auth'] = user.exec
    ? { kind: 'exec', exec: user.exec }
    : user.clientCertificate && user.clientKey
      ? { kind: 'client-certificate', certificate: user.clientCertificate, key: user.clientKey }
      : user.tokenFile
        ? { kind: 'token-file', path: user.tokenFile }
        : user.token
          ? { kind: 'token', token: user.token }
          : { kind: 'none' };
  return {
    server,
    ...(context.cluster.certificateAuthority ? { certificateAuthority: context.cluster.certificateAuthority } : {}),
    insecureSkipTlsVerify: context.cluster.insecureSkipTlsVerify === true,
    ...(context.cluster.tlsServerName ? { tlsServerName: context.cluster.tlsServerName } : {}),
    namespace: context.namespace ?? 'default',
    auth,
    describe: `kubeconfig context ${context.name}`,
  };
}

/**
 * The namespace a configuration means when it names none, found without the network: the pod's own
 * in a cluster, else the current context's. Undefined when there is no Kubernetes here at all.
 */
export function defaultNamespace(env: Env, options: ConnectionOptions = {}): string | undefined {
  try {
    return resolveConnection(env, options)?.namespace;
  } catch {
    return undefined; // an unusable kubeconfig is reported when a run connects, with its reason
  }
}

function inCluster(env: Env, dir: string): Connection {
  const host = env.KUBERNETES_SERVICE_HOST!.includes(':') ? `[${env.KUBERNETES_SERVICE_HOST}]` : env.KUBERNETES_SERVICE_HOST!;
  const read = (file: string) => {
    try {
      return readFileSync(join(dir, file), 'utf8').trim();
    } catch {
      return undefined;
    }
  };
  const certificateAuthority = read('ca.crt');
  return {
    server: new URL(`https://${host}:${env.KUBERNETES_SERVICE_PORT}`),
    ...(certificateAuthority ? { certificateAuthority } : {}),
    insecureSkipTlsVerify: false,
    namespace: read('namespace') || 'default',
    // Re-read, not kept: the kubelet rotates a projected service account token while the pod runs.
    auth: { kind: 'token-file', path: join(dir, 'token') },
    describe: 'in-cluster service account',
  };
}

/** The API server carries a bearer and secrets: plain http only on this machine. */
function checkedServer(server: string, where: string): URL {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new KubernetesError(`${where}: server ${JSON.stringify(server)} is not a URL`);
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw new KubernetesError(
      `${where}: plain http:// to ${url.host} would send the bearer and secrets in clear; only loopback may use http`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new KubernetesError(`${where}: server must be an https:// URL`);
  return url;
}

import { stringify } from 'yaml';

export interface KubeconfigOptions {
  /** The context's default namespace; 'default' when absent. */
  namespace?: string;
  /** The name of the context (and of its cluster and user entries). */
  context?: string;
}

/**
 * A kubeconfig for the double: its TLS address with the self-signed CA, a static bearer token, one
 * context that is also the current one. It holds the token: write it to a 0600 file.
 */
export function kubeconfigYaml(server: string, caPem: string, token: string, options: KubeconfigOptions = {}): string {
  const name = options.context ?? 'token-rotator-double';
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } }],
    users: [{ name, user: { token } }],
    contexts: [{ name, context: { cluster: name, user: name, namespace: options.namespace ?? 'default' } }],
    'current-context': name,
    preferences: {},
  });
}

import type { SinkType } from '../sink.js';
import { describeKubernetesSecret, type KubernetesSecretSinkConfig, parseKubernetesSecretConfig } from './kubernetes-secret-config.js';

export type { KubernetesSecretSinkConfig };

/**
 * A Secret in a cluster, one per token: written by server-side apply (field manager token-rotator)
 * so that its other keys, labels and annotations survive, marked as ours, and refused when another
 * tool manages it unless the sink says `adopt`. The client (and its HTTP code) loads only when a
 * run has such a sink.
 */
export const kubernetesSecretSinkType: SinkType<KubernetesSecretSinkConfig> = {
  type: 'kubernetes-secret',
  parse: parseKubernetesSecretConfig,
  // One Secret, one token: two tokens applying one Secret as the same field manager would undo
  // each other's keys, so the key is no part of the identity.
  target: (config) => `kubernetes-secret:${config.namespace}/${config.name}`,
  describe: describeKubernetesSecret,
  async open(context) {
    const { kubernetesSecretClient } = await import('./kubernetes-secret-client.js');
    return kubernetesSecretClient(context);
  },
};

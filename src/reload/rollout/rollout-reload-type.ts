import type { ReloadType } from '../reload.js';
import { describeRollout, parseRolloutConfig, type RolloutReloadConfig } from './rollout-config.js';

/**
 * What `kubectl rollout restart` does: a new pod-template annotation, so the workload's controller
 * replaces its pods and they read the new Secret. The Kubernetes client loads only when a run has one.
 */
export const rolloutReloadType: ReloadType<RolloutReloadConfig> = {
  type: 'rollout',
  parse: parseRolloutConfig,
  describe: (config) => `rollout ${describeRollout(config)}`,
  async open(context) {
    const { rolloutReloader } = await import('./rollout-reloader.js');
    return rolloutReloader(context);
  },
};

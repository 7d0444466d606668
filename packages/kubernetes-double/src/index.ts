export type { ForbiddenAccess } from './access-rules.js';
export type { JsonObject, JsonValue } from './json.js';
export type { KubeconfigOptions } from './kubeconfig.js';
export type { RecordedKubeRequest } from './request-log.js';
export {
  type KubernetesDouble,
  type KubernetesDoubleOptions,
  type KubernetesObjects,
  startKubernetesDouble,
} from './start-kubernetes-double.js';

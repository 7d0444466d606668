import type { StateBackend, StateBackendContext, StateBackendType } from '../state-backend.js';
import { fileStateBackend } from './file/file-backend.js';
import { kubernetesStateBackend } from './kubernetes/kubernetes-backend.js';

/** Every state backend, by the name `ROTATOR_STATE_BACKEND` gives: a new one is one entry here and one folder. */
export const stateBackends = {
  file: fileStateBackend,
  kubernetes: kubernetesStateBackend,
} satisfies Record<string, StateBackendType>;

export type StateBackendName = keyof typeof stateBackends;

export function isStateBackendName(name: unknown): name is StateBackendName {
  return typeof name === 'string' && Object.hasOwn(stateBackends, name);
}

export function openStateBackend(name: StateBackendName, context: StateBackendContext): Promise<StateBackend> {
  return stateBackends[name].open(context);
}

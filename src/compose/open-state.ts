import type { Settings } from '../config/env.js';
import { authenticatedState } from '../state/authenticated-state.js';
import { openStateBackend, type StateBackendName } from '../state/backends/registry.js';
import type { StateBackend, StateBackendContext } from '../state/state-backend.js';

/** The run's state backend, every document of it authenticated with the run's state keys. */
export async function openState(
  settings: Pick<Settings, 'stateBackend' | 'stateDir' | 'stateKey' | 'previousStateKeys' | 'acceptUnauthenticatedState'>,
  context: Omit<StateBackendContext, 'dir'>,
): Promise<StateBackend> {
  const backend = await openStateBackend(settings.stateBackend as StateBackendName, { ...context, dir: settings.stateDir });
  return authenticatedState(backend, {
    keys: { current: settings.stateKey, previous: settings.previousStateKeys },
    acceptUnauthenticated: settings.acceptUnauthenticatedState,
  });
}

import type { Settings } from '../config/env.js';
import { upgradeStoredTarget } from '../sinks/registry.js';
import { authenticatedState } from '../state/authenticated-state.js';
import { openStateBackend, type StateBackendName } from '../state/backends/registry.js';
import type { StateBackend, StateBackendContext } from '../state/state-backend.js';
import { withUpgradedTargets } from '../state/upgraded-targets.js';

/**
 * The state backend the settings name: every document authenticated with the run's state keys
 * (closest to the backend, so the MAC covers what is stored), and the sink targets of records and
 * journal entries written before a target's form changed read in today's form.
 */
export async function openState(
  settings: Pick<Settings, 'stateBackend' | 'stateDir' | 'stateKey' | 'previousStateKeys' | 'acceptUnauthenticatedState'>,
  context: Omit<StateBackendContext, 'dir'>,
): Promise<StateBackend> {
  const backend = await openStateBackend(settings.stateBackend as StateBackendName, { ...context, dir: settings.stateDir });
  const authenticated = authenticatedState(backend, {
    keys: { current: settings.stateKey, previous: settings.previousStateKeys },
    acceptUnauthenticated: settings.acceptUnauthenticatedState,
    onAcceptedUnauthenticated: (what) =>
      context.logger.warn(`${what} is not authenticated by the state key; accepted as ROTATOR_STATE_KEY_PREVIOUS=none says`),
  });
  return withUpgradedTargets(authenticated, upgradeStoredTarget);
}

import type { Settings } from '../config/env.js';
import { upgradeStoredTarget } from '../sinks/registry.js';
import { openStateBackend, type StateBackendName } from '../state/backends/registry.js';
import type { StateBackend, StateBackendContext } from '../state/state-backend.js';
import { withUpgradedTargets } from '../state/upgraded-targets.js';

/**
 * The state backend the settings name, reading the sink targets of records and journal entries
 * written before a target's form changed in today's form.
 */
export async function openState(
  settings: Pick<Settings, 'stateBackend' | 'stateDir'>,
  context: Omit<StateBackendContext, 'dir'>,
): Promise<StateBackend> {
  const backend = await openStateBackend(settings.stateBackend as StateBackendName, { dir: settings.stateDir, ...context });
  return withUpgradedTargets(backend, upgradeStoredTarget);
}

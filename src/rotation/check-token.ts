import type { ServiceToken } from '../api/service-token.js';
import type { TokenPolicy } from '../config/types.js';
import { decide, type Decision } from '../policy/decide.js';
import { historyOf, type LineageResolution, resolveLineage } from '../state/lineage.js';
import type { RotationDeps } from './deps.js';

export interface TokenCheck {
  lineage: LineageResolution;
  token: ServiceToken;
  decision: Decision;
}

/** Gather and decide for one name: its current id from the state, the token from the service. */
export async function checkToken(
  policy: TokenPolicy,
  deps: Pick<RotationDeps, 'api' | 'state' | 'clock'>,
  options: { signal?: AbortSignal } = {},
): Promise<TokenCheck> {
  const existing = await deps.state.read(policy.name);
  const lineage = resolveLineage(policy, existing, deps.clock.now());
  const token = await deps.api.retrieve(lineage.record.currentId, options);
  const decision = decide({ token, history: historyOf(lineage.record), settings: policy.settings, now: deps.clock.now() });
  return { lineage, token, decision };
}

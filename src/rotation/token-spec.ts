import type { RotationSettings } from '../policy/rotation-settings.js';
import type { SinkConfig } from '../sinks/registry.js';
import type { VerifyProbe } from '../verify/verify-config.js';

/**
 * What rotation reads of a token in the policy. The policy's TokenPolicy extends it with what
 * only the daemon and the reloads read (the schedule, the reloads).
 */
export interface TokenSpec {
  name: string;
  /** The token's id when first adopted; the current id lives in the state store. */
  id: string;
  settings: RotationSettings;
  sinks: SinkConfig[];
  /** A probe of the new token itself before commit (`verify:`); the built-in checks run without it. */
  verify?: VerifyProbe;
}

/** The tokens a run covers, in the policy's order. */
export interface TokenSet {
  tokens: readonly TokenSpec[];
}

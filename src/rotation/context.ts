import type { ServiceToken } from '../api/service-token.js';
import type { TokenPolicy } from '../config/types.js';
import type { Logger } from '../log/logger.js';
import type { RotationDeps } from './deps.js';
import type { OrphanReport } from './orphan-report.js';

/** One name's rotation in progress: its policy, its logger, and what it has seen so far. */
export interface RotationContext {
  policy: TokenPolicy;
  deps: RotationDeps;
  log: Logger;
  signal: AbortSignal | undefined;
  orphans: OrphanReport[];
  /** The token as last retrieved, so a failure can still say which id and expiry it was about. */
  token?: ServiceToken;
}

import type { ServiceToken } from '../api/service-token.js';
import type { Logger } from '../log/logger.js';
import type { HeldLock } from '../state/name-locks.js';
import type { RotationDeps } from './deps.js';
import type { OrphanReport } from './orphan-report.js';
import type { TokenSpec } from './token-spec.js';

/** One name's rotation in progress: its policy, its logger, its lock, and what it has seen so far. */
export interface RotationContext {
  policy: TokenSpec;
  deps: RotationDeps;
  log: Logger;
  /** Aborted at the stop's deadline: reads and deliveries still waiting are given up. */
  signal: AbortSignal | undefined;
  /** Aborted when a stop is asked: no new regenerate is sent (see `rotation/shutdown.ts`). */
  stopping?: AbortSignal | undefined;
  /** Set once a regenerate is about to be sent or an unfinished rotation is taken up. */
  stage?: 'check' | 'rotation';
  /**
   * The name's lock, checked before each step another holder would conflict with (sending a
   * regenerate, staging, committing): a process stopped long enough can lose it.
   */
  lock: Pick<HeldLock, 'assertHeld'>;
  orphans: OrphanReport[];
  /** The token as last retrieved, so a failure can still say which id and expiry it was about. */
  token?: ServiceToken;
  /**
   * The id the service is asked about: the current one the state holds, which may be later than the
   * policy's. A failure before the token was retrieved is about it, and says it.
   */
  askedId?: string;
}

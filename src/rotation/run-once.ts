import pLimit from 'p-limit';
import type { Policy } from '../config/types.js';
import type { RotationDeps } from './deps.js';
import type { TokenOutcome } from './outcome.js';
import { rotateToken } from './rotate-token.js';

/**
 * One pass over every token. Names are independent, so a few run at once; one name is only ever
 * handled by one task (names are unique in a policy). A failure of one never stops the others.
 */
export async function runOnce(policy: Policy, deps: RotationDeps, options: { concurrency: number; signal?: AbortSignal }): Promise<TokenOutcome[]> {
  const limit = pLimit(options.concurrency);
  return Promise.all(policy.tokens.map((token) => limit(() => rotateToken(token, deps, { signal: options.signal }))));
}

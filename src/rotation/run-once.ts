import pLimit from 'p-limit';

import type { Policy } from '../config/types.js';
import { StateError } from '../errors.js';
import type { RotationDeps } from './deps.js';
import type { TokenOutcome } from './outcome.js';
import { rotateToken } from './rotate-token.js';
import { findStrayEntries } from './stray-entries.js';

/**
 * One pass over every token. Names are independent, so a few run at once; each name is held by
 * one process at a time through its lock. A failure of one never stops the others.
 */
export async function runOnce(
  policy: Policy,
  deps: RotationDeps,
  options: { concurrency: number; signal?: AbortSignal },
): Promise<TokenOutcome[]> {
  const limit = pLimit(options.concurrency);
  const outcomes = await Promise.all(policy.tokens.map((token) => limit(() => rotateToken(token, deps, { signal: options.signal }))));
  const strays = await findStrayEntries(policy, deps.journal);
  return [
    ...outcomes,
    ...strays.map((stray): TokenOutcome => {
      deps.logger.error({ tokenName: stray.name, phase: stray.phase }, stray.message);
      return {
        name: stray.name,
        action: 'failed',
        reason: stray.message,
        oldId: '-',
        expiresAt: null,
        sinks: [],
        orphans: [],
        error: { code: StateError.code, message: stray.message },
      };
    }),
  ];
}

import pLimit from 'p-limit';

import type { Policy } from '../config/types.js';
import type { RotationDeps } from './deps.js';
import type { TokenOutcome } from './outcome.js';
import { rotateToken } from './rotate-token.js';

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
  return [...outcomes, ...(await strayJournalEntries(policy, deps))];
}

/** A journal entry whose name left the policy may hold a staged secret: it must not be forgotten. */
async function strayJournalEntries(policy: Policy, deps: RotationDeps): Promise<TokenOutcome[]> {
  const names = new Set(policy.tokens.map((t) => t.name));
  const strays = (await deps.journal.names()).filter((name) => !names.has(name));
  return strays.map((name) => {
    const message =
      `an unfinished rotation of '${name}' is in ${deps.journal.describe(name)}, but '${name}' is no longer in the policy; ` +
      'put it back to let the rotation finish, or deal with the entry by hand and remove the file';
    deps.logger.error({ tokenName: name }, message);
    return {
      name,
      action: 'failed',
      reason: message,
      oldId: '-',
      expiresAt: null,
      sinks: [],
      orphans: [],
      error: { code: 'ERR_STATE', message },
    };
  });
}

import pLimit from 'p-limit';

import { StateError } from '../errors.js';
import type { RotationDeps } from './deps.js';
import type { TokenOutcome } from './outcome.js';
import { trackProgress } from './progress.js';
import { rotateToken } from './rotate-token.js';
import type { Timers } from './shutdown.js';
import { findStrayEntries } from './stray-entries.js';
import type { TokenSet, TokenSpec } from './token-spec.js';

export interface RunOnceOptions {
  concurrency: number;
  /** Aborted at a stop's deadline: what still waits on the network is given up (see `rotation/shutdown.ts`). */
  signal?: AbortSignal;
  /** Aborted when a stop is asked: no name is started any more, and no regenerate is sent. */
  stopping?: AbortSignal;
  /** For the progress lines' timers (tests). */
  timers?: Timers;
}

/** A name the run never started because it was asked to stop: nothing was done, nothing is counted. */
function notStarted(token: TokenSpec): TokenOutcome {
  return {
    name: token.name,
    action: 'interrupted',
    stage: 'check',
    reason: 'not checked: the run was stopped before it got to this token',
    oldId: token.id,
    expiresAt: null,
    sinks: [],
    orphans: [],
  };
}

/**
 * One pass over every token. Names are independent, so a few run at once; each name is held by
 * one process at a time through its lock. A failure of one never stops the others; a stop asked
 * starts no further name.
 */
export async function runOnce(policy: TokenSet, deps: RotationDeps, options: RunOnceOptions): Promise<TokenOutcome[]> {
  const limit = pLimit(options.concurrency);
  const progress = trackProgress({ total: policy.tokens.length, logger: deps.logger, timers: options.timers });
  const skipped: string[] = [];
  let outcomes: TokenOutcome[];
  try {
    outcomes = await Promise.all(
      policy.tokens.map((token) =>
        limit(async () => {
          if (options.stopping?.aborted) {
            skipped.push(token.name);
            return notStarted(token);
          }
          progress.started(token.name);
          try {
            return await rotateToken(token, deps, { signal: options.signal, stopping: options.stopping });
          } finally {
            progress.finished(token.name);
          }
        }),
      ),
    );
  } finally {
    progress.stop();
  }
  if (skipped.length > 0) {
    deps.logger.warn({ notStarted: skipped }, `stopped: ${skipped.length} of ${policy.tokens.length} tokens not checked`);
  }
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

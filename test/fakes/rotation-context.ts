import type { ServiceToken } from '../../src/api/service-token.js';
import type { TokenServiceClient } from '../../src/api/token-service-client.js';
import type { TokenPolicy } from '../../src/config/types.js';
import type { RotationContext } from '../../src/rotation/context.js';
import type { RotationDeps } from '../../src/rotation/deps.js';
import { sealContext } from '../../src/rotation/seal-context.js';
import { Secret } from '../../src/secret.js';
import { type IntentEntry, JOURNAL_VERSION, type StagedEntry } from '../../src/state/journal-entry.js';
import { sealSecret } from '../../src/state/secret-box.js';

/**
 * One name's rotation context over a simulated process, for tests that drive a single protocol step
 * (verification, reconcile, a journalled regenerate) without the whole of `rotateToken`. The lock is
 * held unless `lockLost` says it was taken over.
 */
export function rotationContext(
  policy: TokenPolicy,
  deps: RotationDeps,
  options: { token?: ServiceToken; lockLost?: Error } = {},
): RotationContext {
  return {
    policy,
    deps,
    log: deps.logger,
    signal: undefined,
    lock: {
      assertHeld: async () => {
        if (options.lockLost) throw options.lockLost;
      },
    },
    orphans: [],
    ...(options.token ? { token: options.token } : {}),
  };
}

/** An intent entry as `regenerateJournalled` writes it before sending. */
export function intentEntry(input: {
  name: string;
  oldId: string;
  startedAt: Date;
  oldExpiresAt: Date | null;
  existingTokenExpiresAt: Date;
  newTokenExpiresAt?: Date | null;
}): IntentEntry {
  return {
    version: JOURNAL_VERSION,
    name: input.name,
    rotationId: `${input.name}-rotation`,
    phase: 'intent',
    reason: 'due',
    startedAt: input.startedAt.toISOString(),
    oldId: input.oldId,
    oldExpiresAt: input.oldExpiresAt ? input.oldExpiresAt.toISOString() : null,
    existingTokenExpiresAt: input.existingTokenExpiresAt.toISOString(),
    newTokenExpiresAt: input.newTokenExpiresAt ? input.newTokenExpiresAt.toISOString() : null,
    delivered: [],
  };
}

/** A staged entry for a new token `newId` (its secret sealed without a key), as verification finds it. */
export function stagedEntry(
  intent: IntentEntry,
  input: { newId: string; newExpiresAt: Date | null; secret: string; stagedAt: Date },
): StagedEntry {
  return {
    ...intent,
    phase: 'staged',
    staged: {
      newId: input.newId,
      newExpiresAt: input.newExpiresAt ? input.newExpiresAt.toISOString() : null,
      stagedAt: input.stagedAt.toISOString(),
      secret: sealSecret(new Secret(input.secret), undefined, sealContext(intent.name, input.newId)),
    },
  };
}

/**
 * The service client as a real one behaves under a stop: a call given an aborted signal is given up
 * (rejected with the stop's reason) before it reaches the service. The stop comes, with reason
 * "deadline", as the `call`-th call of `op` is made; a call made without a signal is not given up.
 */
export function stoppedAt(
  api: TokenServiceClient,
  stop: AbortController,
  at: { op: 'retrieve' | 'regenerate'; call: number },
): TokenServiceClient {
  const calls = { retrieve: 0, regenerate: 0 };
  const arrive = (op: 'retrieve' | 'regenerate', signal: AbortSignal | undefined) => {
    if (++calls[op] === at.call && op === at.op) stop.abort(new Error('deadline'));
    signal?.throwIfAborted();
  };
  return {
    retrieve: async (id, options = {}) => {
      arrive('retrieve', options.signal);
      return api.retrieve(id, options);
    },
    regenerate: async (id, times, options = {}) => {
      arrive('regenerate', options.signal);
      return api.regenerate(id, times, options);
    },
  };
}

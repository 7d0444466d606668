import type { ServiceToken } from '../api/service-token.js';
import { OrphanedTokenError, RegenerateOutcomeUnknownError } from '../errors.js';
import { rotationTimes } from '../policy/rotation-times.js';
import type { Secret } from '../secret.js';
import { JOURNAL_VERSION, type JournalEntry } from '../state/journal-entry.js';
import { sealSecret } from '../state/secret-box.js';
import type { RotationContext } from './context.js';
import { iso } from './outcome.js';
import { reconcile } from './reconcile.js';

/** Sends per run at most: the first, and after a reconcile one more for each of two lost answers. */
const MAX_SENDS = 3;

/** What binds a sealed secret to its entry. */
export const sealContext = (name: string, newId: string) => `token-rotator:${name}:${newId}`;

/**
 * Regenerate with the intent journalled first and the answer staged before anything else happens.
 * A definite refusal ends here with nothing changed; an unknown outcome is reconciled, never blindly
 * sent again.
 */
export async function regenerateJournalled(
  ctx: RotationContext,
  start: { token: ServiceToken; reason: string; overlapMs: number },
): Promise<{ entry: JournalEntry; secret: Secret }> {
  const { deps, policy, log } = ctx;
  let token = start.token;
  let reason = start.reason;
  for (let send = 1; ; send++) {
    const now = deps.clock.now();
    const times = rotationTimes({
      currentExpiresAt: token.expiresAt,
      overlapMs: start.overlapMs,
      lifetimeMs: policy.settings.lifetimeMs,
      now,
    });
    const intent: JournalEntry = {
      version: JOURNAL_VERSION,
      name: policy.name,
      phase: 'intent',
      reason,
      startedAt: now.toISOString(),
      oldId: token.id,
      oldExpiresAt: iso(token.expiresAt),
      existingTokenExpiresAt: times.existingTokenExpiresAt.toISOString(),
      newTokenExpiresAt: iso(times.newTokenExpiresAt),
      delivered: [],
    };
    await deps.journal.write(intent);
    log.info(
      {
        step: 'regenerate',
        oldId: token.id,
        existingTokenExpiresAt: intent.existingTokenExpiresAt,
        newTokenExpiresAt: intent.newTokenExpiresAt,
        reason,
      },
      'sending regenerate',
    );
    deps.failpoint?.('intent');

    let fresh;
    try {
      fresh = await deps.api.regenerate(token.id, times, { signal: ctx.signal });
    } catch (error) {
      if (!(error instanceof RegenerateOutcomeUnknownError)) {
        await deps.journal.erase(policy.name); // a definite "no": nothing changed anywhere
        throw error;
      }
      log.warn({ step: 'regenerate', oldId: token.id, err: error }, 'regenerate outcome unknown; reconciling');
      const verdict = await reconcile(ctx, intent);
      await deps.journal.erase(policy.name);
      if (verdict.applied && !verdict.token) throw orphanedWithoutWayBack(policy.name, intent);
      if (send >= MAX_SENDS) throw error;
      token = verdict.token!;
      if (verdict.applied) reason = `the secret of the previous regenerate was lost; ${start.reason}`;
      continue;
    }
    deps.failpoint?.('regenerated');

    const staged: JournalEntry = {
      ...intent,
      phase: 'staged',
      staged: {
        newId: fresh.id,
        newExpiresAt: iso(fresh.expiresAt),
        stagedAt: deps.clock.now().toISOString(),
        secret: sealSecret(fresh.secret, deps.stateKey, sealContext(policy.name, fresh.id)),
      },
    };
    await deps.journal.write(staged);
    log.info(
      {
        step: 'staged',
        oldId: token.id,
        newId: fresh.id,
        existingTokenExpiresAt: intent.existingTokenExpiresAt,
        newExpiresAt: staged.staged!.newExpiresAt,
        reason,
      },
      'regenerated and staged',
    );
    deps.failpoint?.('staged');
    return { entry: staged, secret: fresh.secret };
  }
}

export function orphanedWithoutWayBack(name: string, intent: JournalEntry): OrphanedTokenError {
  return new OrphanedTokenError(
    `'${name}' was regenerated from ${intent.oldId} at about ${intent.startedAt}, the answer was lost, and the old token no longer works: ` +
      `nothing is left to rotate from. Create a new token for '${name}', put it where its sinks expect it, set its id in the policy, ` +
      `and delete the orphaned token in the service's console.`,
  );
}

import { randomUUID } from 'node:crypto';

import type { ServiceToken } from '../api/service-token.js';
import type { RegeneratedToken } from '../api/token-service-client.js';
import { OrphanedTokenError, RegenerateAnswerUnusableError, RegenerateOutcomeUnknownError, SecretHeldError } from '../errors.js';
import { rotationTimes } from '../policy/rotation-times.js';
import type { Secret } from '../secret.js';
import { type IntentEntry, JOURNAL_VERSION, type StagedEntry } from '../state/journal-entry.js';
import { sealSecret } from '../state/secret-box.js';
import type { RotationContext } from './context.js';
import { iso } from './outcome.js';
import { reconcile } from './reconcile.js';
import { reportOrphan } from './report-orphan.js';
import { heldSealContext, sealContext } from './seal-context.js';
import { RotationStopped } from './shutdown.js';

/** Sends per run at most: the first, and after a reconcile one more for each of two lost answers. */
const MAX_SENDS = 3;

export type Regenerated =
  /** The normal case: the answer is journalled, and from here the secret cannot be lost. */
  | { kind: 'staged'; entry: StagedEntry; secret: Secret }
  /** The journal could not be written after the service answered: the secret exists only in memory. */
  | { kind: 'unjournalled'; entry: StagedEntry; secret: Secret; cause: unknown };

/**
 * Regenerate with the intent journalled first and the answer staged before anything else happens.
 * A definite refusal ends here with nothing changed; an unknown outcome is reconciled, never blindly
 * sent again; an answer that carried a secret is never followed by another regenerate.
 */
export async function regenerateJournalled(
  ctx: RotationContext,
  start: { token: ServiceToken; reason: string; overlapMs: number },
): Promise<Regenerated> {
  const { deps, policy, log } = ctx;
  let token = start.token;
  let reason = start.reason;
  for (let send = 1; ; send++) {
    // A stop asked before the intent is written leaves nothing behind; one asked after, nothing to undo.
    if (ctx.stopping?.aborted) throw new RotationStopped(`due (${reason}), not rotated`);
    ctx.stage = 'rotation';
    const now = deps.clock.now();
    const times = rotationTimes({
      currentExpiresAt: token.expiresAt,
      overlapMs: start.overlapMs,
      lifetimeMs: policy.settings.lifetimeMs,
      now,
    });
    const intent: IntentEntry = {
      version: JOURNAL_VERSION,
      name: policy.name,
      rotationId: randomUUID(),
      phase: 'intent',
      reason,
      startedAt: now.toISOString(),
      oldId: token.id,
      oldExpiresAt: iso(token.expiresAt),
      existingTokenExpiresAt: times.existingTokenExpiresAt.toISOString(),
      newTokenExpiresAt: iso(times.newTokenExpiresAt),
      delivered: [],
    };
    // Another holder of the name would send its own regenerate: never two.
    await ctx.lock.assertHeld();
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

    let fresh: RegeneratedToken;
    try {
      // Never given the stop's abort: its answer may be the only copy of the new secret. It ends
      // with an answer or its own timeout, and an unanswered one is reconciled from the intent.
      fresh = await deps.api.regenerate(token.id, times);
    } catch (error) {
      if (error instanceof RegenerateAnswerUnusableError) {
        // The service acted, and what it answered cannot be used: lost, and never asked for again.
        reportOrphan(
          ctx,
          { oldId: token.id, regeneratedAt: intent.startedAt, oldTokenWorksUntil: intent.existingTokenExpiresAt },
          error.message,
        );
        await deps.journal.erase(policy.name);
        throw error;
      }
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
    if (fresh.kind === 'untrackable') return hold(ctx, intent, fresh);

    const entry: StagedEntry = {
      ...intent,
      phase: 'staged',
      staged: {
        newId: fresh.id,
        newExpiresAt: iso(fresh.expiresAt),
        stagedAt: deps.clock.now().toISOString(),
        secret: sealSecret(fresh.secret, deps.stateKey, sealContext(policy.name, fresh.id)),
      },
    };
    try {
      await ctx.lock.assertHeld();
    } catch (error) {
      // Whoever holds the name now owns its journal: this secret can go nowhere without a conflict.
      reportOrphan(
        ctx,
        { oldId: token.id, newId: fresh.id, regeneratedAt: intent.startedAt, oldTokenWorksUntil: intent.existingTokenExpiresAt },
        // Stryker disable next-line StringLiteral: `detail` is only the wording of the orphan log line
        'this process lost its lock on the name while waiting for the answer (it was stopped or frozen), so the answer is not kept',
      );
      throw error;
    }
    try {
      await deps.journal.write(entry);
    } catch (cause) {
      log.error(
        { step: 'staged', oldId: token.id, newId: fresh.id, err: cause },
        'the new secret could not be journalled; delivering it from memory',
      );
      return { kind: 'unjournalled', entry, secret: fresh.secret, cause };
    }
    log.info(
      {
        step: 'staged',
        oldId: token.id,
        newId: fresh.id,
        existingTokenExpiresAt: intent.existingTokenExpiresAt,
        newExpiresAt: entry.staged.newExpiresAt,
        reason,
      },
      'regenerated and staged',
    );
    deps.failpoint?.('staged');
    return { kind: 'staged', entry, secret: fresh.secret };
  }
}

/**
 * A secret with an id we cannot use: kept in the journal (sealed when there is a key), delivered
 * nowhere, and the name stops until an operator decides. Losing it would be worse: the old token
 * stops at `existingTokenExpiresAt` whatever we do.
 */
async function hold(ctx: RotationContext, intent: IntentEntry, fresh: Extract<RegeneratedToken, { kind: 'untrackable' }>): Promise<never> {
  const { deps, policy } = ctx;
  const heldAt = deps.clock.now().toISOString();
  try {
    await ctx.lock.assertHeld();
    await deps.journal.write({
      ...intent,
      phase: 'held',
      held: {
        problem: fresh.problem,
        heldAt,
        secret: sealSecret(fresh.secret, deps.stateKey, heldSealContext(policy.name, intent.startedAt)),
      },
    });
  } catch (error) {
    reportOrphan(
      ctx,
      { oldId: intent.oldId, regeneratedAt: intent.startedAt, oldTokenWorksUntil: intent.existingTokenExpiresAt },
      // Stryker disable next-line StringLiteral: `detail` is only the wording of the orphan log line
      `${fresh.problem}, and the secret could not be kept either (${(error as Error).message})`,
    );
    throw error;
  }
  throw heldSecretError(policy.name, intent.oldId, fresh.problem, deps.journal.describe(policy.name), intent.existingTokenExpiresAt);
}

export function heldSecretError(name: string, oldId: string, problem: string, where: string, oldStopsAt: string): SecretHeldError {
  return new SecretHeldError(
    `regenerate of '${name}' from ${oldId}: ${problem}. The secret is kept in ${where} and delivered nowhere; '${name}' is not rotated ` +
      `again until this is dealt with. The old token stops at ${oldStopsAt}. Find the new token in the service's console, then either ` +
      `deliver the held secret as that token with \`token-rotator rotate ${name} --held-id ID\`, or delete that token and remove the entry.`,
  );
}

export function orphanedWithoutWayBack(name: string, intent: IntentEntry): OrphanedTokenError {
  return new OrphanedTokenError(
    `'${name}' was regenerated from ${intent.oldId} at about ${intent.startedAt}, the answer was lost, and the old token no longer works: ` +
      `nothing is left to rotate from. Create a new token for '${name}', put it where its sinks expect it, set its id in the policy, ` +
      `and delete the orphaned token in the service's console.`,
  );
}

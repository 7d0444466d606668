import { isTokenNotFound } from '../api/token-not-found.js';
import { RegenerateOutcomeUnknownError } from '../errors.js';
import type { StateRecord } from '../state/state-record.js';
import type { RotationContext } from './context.js';
import { type EarlierTokenOutcome, errorSummary, iso } from './outcome.js';

/** The throwaway minted to end a token lives this long, and its secret is never kept. */
const THROWAWAY_LIFETIME_MS = 60_000;

/**
 * After an emergency rotation, tokens of the name replaced earlier may still be inside their own
 * overlap, and the leaked credential is often one of them. The interface has no delete, but a
 * regenerate with `existingTokenExpiresAt` = the deadline ends a token at the deadline, minting a
 * throwaway that dies within a minute; its secret is dropped at once, never delivered nor kept.
 * Every token that still works past `deadline` is ended, or named with its expiry.
 */
export async function endEarlierTokens(ctx: RotationContext, record: StateRecord, deadline: Date): Promise<EarlierTokenOutcome[]> {
  const { deps, log } = ctx;
  const outcomes: EarlierTokenOutcome[] = [];
  const candidates = record.lineage.filter((l) => l.id !== record.currentId && (l.expiresAt === null || new Date(l.expiresAt) > deadline));
  for (const earlier of candidates) {
    const outcome = await endOne(ctx, earlier, deadline);
    outcomes.push(outcome);
    if (outcome.result === 'still-alive')
      log.error(
        { step: 'revoke', id: earlier.id, expiresAt: outcome.expiresAt, err: outcome.error },
        `STILL ALIVE: token ${earlier.id}, replaced earlier, could not be ended and works until ${outcome.expiresAt ?? 'it is deleted'}; delete it in the service's console`,
      );
    else
      log.warn(
        { step: 'revoke', id: earlier.id, result: outcome.result, expiresAt: outcome.expiresAt },
        'earlier token of this name checked',
      );
  }
  if (outcomes.length > 0) {
    const known = new Map(outcomes.map((o) => [o.id, o.expiresAt]));
    const lineage = record.lineage.map((l) => (known.has(l.id) ? { ...l, expiresAt: known.get(l.id) ?? null } : l));
    await deps.state.write({ ...record, lineage });
  }
  return outcomes;
}

async function endOne(ctx: RotationContext, earlier: StateRecord['lineage'][number], deadline: Date): Promise<EarlierTokenOutcome> {
  const { deps, log } = ctx;
  const { id } = earlier;
  let current;
  try {
    current = await deps.api.retrieve(id, { signal: ctx.signal });
  } catch (error) {
    if (isTokenNotFound(error)) return { id, result: 'gone', expiresAt: null };
    // Unknown now: it works until the expiry recorded when it was replaced, as far as we know.
    return { id, result: 'still-alive', expiresAt: earlier.expiresAt, error: errorSummary(error).message };
  }
  if (current.expiresAt !== null && current.expiresAt <= deadline)
    return { id, result: 'already-ended', expiresAt: iso(current.expiresAt) };

  const times = { existingTokenExpiresAt: deadline, newTokenExpiresAt: new Date(deps.clock.now().getTime() + THROWAWAY_LIFETIME_MS) };
  try {
    const throwaway = await deps.api.regenerate(id, times, { signal: ctx.signal });
    log.info(
      {
        step: 'revoke',
        id,
        throwawayId: throwaway.kind === 'tracked' ? throwaway.id : undefined,
        throwawayExpiresAt: iso(times.newTokenExpiresAt),
      },
      'ended an earlier token; the throwaway it minted dies within a minute and its secret was not kept',
    );
    return { id, result: 'ended', expiresAt: iso(deadline) };
  } catch (error) {
    if (!(error instanceof RegenerateOutcomeUnknownError))
      return { id, result: 'still-alive', expiresAt: iso(current.expiresAt), error: errorSummary(error).message };
    // Whether it took effect shows on the token itself: ended by now it may well be gone already.
    let after;
    try {
      after = await deps.api.retrieve(id, { signal: ctx.signal });
    } catch (lookup) {
      if (isTokenNotFound(lookup)) return { id, result: 'ended', expiresAt: iso(deadline) };
    }
    if (after && after.expiresAt !== null && after.expiresAt.getTime() <= deadline.getTime() + 1000)
      return { id, result: 'ended', expiresAt: iso(after.expiresAt) };
    return { id, result: 'still-alive', expiresAt: iso(after?.expiresAt ?? current.expiresAt), error: errorSummary(error).message };
  }
}

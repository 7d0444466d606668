import type { ServiceToken } from '../api/service-token.js';
import { isTokenNotFound } from '../api/token-not-found.js';
import { regenerateWasApplied } from '../policy/rotation-times.js';
import type { JournalEntry } from '../state/journal-entry.js';
import type { RotationContext } from './context.js';
import type { OrphanReport } from './orphan-report.js';
import { reportOrphan } from './report-orphan.js';

export type ReconcileVerdict =
  /** Nothing moved: the regenerate never took effect, and sending it again is safe. */
  | { applied: false; token: ServiceToken }
  /** The service applied it and the secret is lost; `token` is the old token if it still works. */
  | { applied: true; token: ServiceToken | undefined; report: OrphanReport };

const toDate = (iso: string | null) => (iso === null ? null : new Date(iso));

/**
 * After a regenerate whose answer never came (a timeout, a reset, a 5xx, a crash), look at the old
 * token: if its expiry moved to what we sent, or it is gone, the service acted and the new secret is
 * lost: an orphaned token, reported loudly. A failed look throws, and the intent stays journalled.
 */
export async function reconcile(ctx: RotationContext, intent: JournalEntry): Promise<ReconcileVerdict> {
  const { deps, log } = ctx;
  let current: ServiceToken | undefined;
  try {
    current = await deps.api.retrieve(intent.oldId, { signal: ctx.signal });
  } catch (error) {
    if (!isTokenNotFound(error)) throw error;
  }
  const applied = regenerateWasApplied({
    before: toDate(intent.oldExpiresAt),
    sent: new Date(intent.existingTokenExpiresAt),
    now: current ? current.expiresAt : undefined,
  });
  if (!applied) {
    log.warn({ step: 'reconcile', oldId: intent.oldId }, 'the unanswered regenerate did not take effect; sending it again is safe');
    return { applied: false, token: current! };
  }

  const now = deps.clock.now();
  const works = current && (current.expiresAt === null || current.expiresAt > now);
  const report = reportOrphan(
    ctx,
    {
      oldId: intent.oldId,
      regeneratedAt: intent.startedAt,
      oldTokenWorksUntil: current ? (current.expiresAt?.toISOString() ?? null) : undefined,
    },
    // Stryker disable next-line StringLiteral: `detail` is only the wording of the orphan log line
    `its answer was lost.${works ? ' Regenerating again from the old token, which still works' : ' The old token no longer works'}`,
  );
  return { applied: true, token: works ? current : undefined, report };
}

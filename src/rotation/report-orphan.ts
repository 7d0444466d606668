import type { RotationContext } from './context.js';
import type { OrphanReport } from './orphan-report.js';

/**
 * Says loudly that a token exists whose secret nobody has, and adds it to the outcome, from which
 * metrics and notifications learn of it. `detail` says how it came to be lost.
 */
export function reportOrphan(ctx: RotationContext, report: Omit<OrphanReport, 'name' | 'detectedAt'>, detail: string): OrphanReport {
  const full: OrphanReport = { name: ctx.policy.name, detectedAt: ctx.deps.clock.now().toISOString(), ...report };
  ctx.log.error(
    {
      step: 'orphan',
      oldId: full.oldId,
      newId: full.newId,
      regeneratedAt: full.regeneratedAt,
      oldTokenWorksUntil: full.oldTokenWorksUntil,
    },
    `ORPHANED TOKEN: the service regenerated '${full.name}' from ${full.oldId} at about ${full.regeneratedAt}; ${detail}. ` +
      `The orphan is ${full.newId ? `token ${full.newId} of '${full.name}'` : `a new token named '${full.name}'`}, whose secret nobody has: delete it in the service's console.`,
  );
  ctx.orphans.push(full);
  return full;
}

import { tokenIdProblem } from '../common/token-id.js';
import { StateError } from '../errors.js';
import type { HeldEntry, StagedEntry } from '../state/journal-entry.js';
import { openSecret, sealSecret } from '../state/secret-box.js';
import type { RotationContext } from './context.js';
import { stateKeysOf } from './deps.js';
import { iso } from './outcome.js';
import { heldSealContext, sealContext } from './seal-context.js';

/**
 * Turns a held secret into a staged one, as the token an operator identified in the service's
 * console. The id is confirmed with the service first (it must exist), so a typo cannot make the
 * state track a token that is not there; the secret itself is never shown to anyone.
 */
export async function stageHeldSecret(ctx: RotationContext, entry: HeldEntry, heldId: string): Promise<StagedEntry> {
  const { deps, policy, log } = ctx;
  const problem = tokenIdProblem(heldId);
  if (problem) throw new StateError(`--held-id ${JSON.stringify(heldId.slice(0, 80))}: the id ${problem}`);
  const secret = openSecret(entry.held.secret, stateKeysOf(deps), heldSealContext(policy.name, entry.startedAt));
  if (typeof secret === 'string') {
    throw new StateError(
      `the secret held in ${deps.journal.describe(policy.name)} is sealed; set ROTATOR_STATE_KEY to the key it was sealed with (${secret})`,
    );
  }
  const token = await deps.api.retrieve(heldId, { signal: ctx.signal });
  log.warn(
    { step: 'resume', oldId: entry.oldId, newId: heldId, serviceName: token.name },
    'delivering a held secret as the token an operator named',
  );
  // The rotation's record stays as it was; only what is known of the new token changes.
  const { held: _held, phase: _phase, ...rotation } = entry;
  const staged: StagedEntry = {
    ...rotation,
    phase: 'staged',
    staged: {
      newId: heldId,
      newExpiresAt: iso(token.expiresAt),
      stagedAt: deps.clock.now().toISOString(),
      secret: sealSecret(secret, deps.stateKey, sealContext(policy.name, heldId)),
    },
  };
  await ctx.lock.assertHeld();
  await deps.journal.write(staged);
  return staged;
}

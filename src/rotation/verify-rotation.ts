import { remoteText } from '../http/remote-text.js';
import type { Secret } from '../secret.js';
import type { StagedEntry } from '../state/journal-entry.js';
import { probeNewToken } from '../verify/probe.js';
import type { VerifyProbe } from '../verify/verify-config.js';
import { expiryWarning, retrievedProblem } from '../verify/verify-rules.js';
import type { RotationContext } from './context.js';
import { errorSummary } from './outcome.js';

export type VerifyCheck = 'service' | 'read-back' | 'probe';

export type Verification =
  /** `warnings`: what differs from what was asked without breaking a consumer (an expiry). */
  | { ok: true; checks: VerifyCheck[]; warnings?: string[] }
  /** `target`: for a failed read-back, the sink that must be written again. */
  | { ok: false; check: VerifyCheck; message: string; target?: string };

/**
 * Step 6 of the protocol, after every sink holds the staged secret and before reloads and commit:
 * the service knows the new token as the one asked for, every sink that can be read holds exactly
 * it, and (when the policy gives a probe) the token itself works. A failure commits nothing: the
 * secret stays staged, and the next run verifies again before anything else.
 */
export async function verifyRotation(
  ctx: RotationContext,
  entry: StagedEntry,
  secret: Secret,
  probe: VerifyProbe | undefined,
  options: { sleep?: (ms: number) => Promise<void> } = {},
): Promise<Verification> {
  const { deps, policy, signal } = ctx;
  const newId = entry.staged.newId;

  // The built-in check, with the rotator's own credentials: one GET.
  const warnings: string[] = [];
  try {
    const got = await deps.api.retrieve(newId, { signal });
    const expected = {
      newId,
      serviceName: ctx.token?.id === entry.oldId ? ctx.token.name : undefined,
      askedExpiresAt: entry.newTokenExpiresAt ? new Date(entry.newTokenExpiresAt) : null,
    };
    const problem = retrievedProblem(expected, got);
    if (problem) return { ok: false, check: 'service', message: problem };
    const warning = expiryWarning(expected, got);
    if (warning) warnings.push(warning);
  } catch (error) {
    signal?.throwIfAborted();
    return { ok: false, check: 'service', message: `retrieving the new token ${newId} failed: ${errorSummary(error).message}` };
  }

  // Read-back: a sink that stores something else than it was given is a failed delivery.
  const checks: VerifyCheck[] = ['service'];
  for (const config of policy.sinks) {
    if (!deps.sinks.readable(config)) continue;
    const sink = deps.sinks.describe(config);
    const target = deps.sinks.target(config);
    try {
      const content = await deps.sinks.read(config, { signal });
      if (!content?.secret) return { ok: false, check: 'read-back', target, message: `${sink} holds no secret after delivery` };
      if (!content.secret.equals(secret)) {
        return { ok: false, check: 'read-back', target, message: `${sink} holds another secret than the one delivered` };
      }
    } catch (error) {
      signal?.throwIfAborted();
      // Unreadable is not wrong: the write may well have landed. Not written again, read again next time.
      return { ok: false, check: 'read-back', message: `${sink} could not be read back: ${errorSummary(error).message}` };
    }
  }
  checks.push('read-back');

  if (probe) {
    const result = await probeNewToken(probe, secret, { ...(signal ? { signal } : {}), ...options });
    if (!result.ok) return { ok: false, check: 'probe', message: remoteText(result.message) };
    checks.push('probe');
  }
  return { ok: true, checks, ...(warnings.length > 0 ? { warnings } : {}) };
}

import type { OrphanReport } from '../../rotation/orphan-report.js';
import {
  type EarlierTokenOutcome,
  needsAttention,
  type ReloadOutcome,
  type TokenOutcome,
  type VerificationOutcome,
} from '../../rotation/outcome.js';
import type { WriteResult } from '../../sinks/sink.js';
import { type DriftItem, driftItems } from './drift-items.js';
import { type Expiry, expiryOf } from './expiry.js';
import type { PolicyIdOf } from './policy-id.js';
import type { SinkLookup, SinkRef } from './sink-ref.js';

/** What a token's line in `plan`, `once` and `rotate` says was (or would be) done: the same words in all three. */
export type ItemAction = 'rotate' | 'redeliver' | 'skip' | 'none';

export interface SinkItem extends SinkRef {
  result: WriteResult | 'failed';
  error?: string;
}

export interface ItemError {
  code: string;
  message: string;
  /** The HTTP status the token service answered, when it answered one. */
  status?: number;
}

/** One token of `once` or `rotate`. */
export type RunItem = {
  name: string;
  /**
   * `rotate`: a new token was made; `redeliver`: no new token, the held current secret was given
   * again to sinks that lacked it; `skip`: not due; `none`: nothing was done (the check failed, or a
   * stop came first).
   */
  action: ItemAction;
  /** `ok`, `failed` (see error), or `interrupted` (a stop came: not a failure, the next run takes it up). */
  result: 'ok' | 'failed' | 'interrupted';
  /** Something is left for a person: a failure, an orphan, a sink still lacking the secret, a failed reload. */
  needsAttention: boolean;
  check?: string;
  reason: string;
  /**
   * The id the service was asked about: the current one from the state, as found at the start (null:
   * a name no longer in the policy). `policyId`: the policy's, when it names another (an earlier one).
   */
  id: string | null;
  policyId?: string;
  newId?: string;
  newExpiresAt?: string | null;
  /** When the replaced token stops working: the overlap's end. */
  existingTokenExpiresAt?: string;
  rotationId?: string;
  rotatedAt?: string;
  sinks: SinkItem[];
  /** Sinks that still lack the staged secret: the next run delivers it without regenerating. */
  pending: string[];
  orphans: OrphanReport[];
  drift: DriftItem[];
  earlierTokens?: EarlierTokenOutcome[];
  reloads: ReloadOutcome[];
  /** The new token's verification before commit: passed (with its checks), failed (nothing committed), or skipped. */
  verification?: VerificationOutcome;
  error?: ItemError;
} & Expiry;

function resultOf(outcome: TokenOutcome): RunItem['result'] {
  if ((outcome.action as string) === 'interrupted') return 'interrupted';
  return outcome.action === 'failed' ? 'failed' : 'ok';
}

export function runItem(outcome: TokenOutcome, lookup: SinkLookup, policyId: PolicyIdOf): RunItem {
  const result = resultOf(outcome);
  const action: ItemAction = outcome.newId
    ? 'rotate'
    : outcome.action === 'skipped'
      ? 'skip'
      : outcome.action === 'redelivered' || (outcome.action === 'failed' && outcome.check === 'sinkDrift' && outcome.sinks.length > 0)
        ? 'redeliver'
        : 'none';
  // A line that failed or stopped before a token was retrieved knows no expiry: null there is not "never".
  const known = outcome.oldId !== '-' && (result === 'ok' || outcome.newId !== undefined || outcome.expiresAt !== null);
  const id = outcome.oldId === '-' ? null : outcome.oldId;
  return {
    name: outcome.name,
    action,
    result,
    needsAttention: needsAttention(outcome),
    ...(outcome.check ? { check: outcome.check } : {}),
    reason: outcome.reason,
    id,
    ...policyId(outcome.name, id),
    ...expiryOf(outcome.expiresAt, known),
    ...(outcome.newId !== undefined ? { newId: outcome.newId, newExpiresAt: outcome.newExpiresAt ?? null } : {}),
    ...(outcome.existingTokenExpiresAt !== undefined ? { existingTokenExpiresAt: outcome.existingTokenExpiresAt } : {}),
    ...(outcome.rotationId !== undefined ? { rotationId: outcome.rotationId } : {}),
    ...(outcome.rotatedAt !== undefined ? { rotatedAt: outcome.rotatedAt } : {}),
    sinks: outcome.sinks.map((s) => ({
      ...lookup(outcome.name, s.sink),
      result: s.result,
      ...(s.error !== undefined ? { error: s.error } : {}),
    })),
    pending: outcome.pending ?? [],
    orphans: outcome.orphans,
    drift: driftItems(outcome.name, outcome.drift, lookup),
    ...(outcome.earlierTokens ? { earlierTokens: outcome.earlierTokens } : {}),
    reloads: outcome.reloads ?? [],
    ...(outcome.verification ? { verification: outcome.verification } : {}),
    ...(outcome.error ? { error: outcome.error } : {}),
  };
}

import type { TokenStatus } from '../../rotation/token-status.js';
import type { StateRecord } from '../../state/state-record.js';
import { type DriftItem, driftItems } from './drift-items.js';
import { type Expiry, expiryOf } from './expiry.js';
import type { PolicyIdOf } from './policy-id.js';
import type { SinkLookup } from './sink-ref.js';

/** One token of `status`, from the state and the sinks alone. */
export type StatusItem = {
  name: string;
  /** The current id as the state knows it (null: a name no longer in the policy); `policyId`: see RunItem. */
  id: string | null;
  policyId?: string;
  /**
   * `ok`; `attention`: an error, a pending delivery or drift; `unknown`: never checked, or no check
   * has succeeded yet, so nothing is known of its expiry. Only `ok` is healthy.
   */
  health: 'ok' | 'attention' | 'unknown';
  lastRotatedAt: string | null;
  /** When the next check will find it due; null: never; absent: not known. */
  dueAt?: string | null;
  pending: string[];
  consecutiveFailures: number;
  backoffUntil: string | null;
  lastError: { at: string; code: string; message: string } | null;
  /** The service's clock minus this machine's, as last measured (ms); null when never measured. */
  serviceClockOffsetMs: number | null;
  drift: DriftItem[];
  /**
   * false: read without ROTATOR_STATE_KEY, so the state's MACs were not checked: what it says is
   * shown as stored. Not a problem of the token.
   */
  authenticated: boolean;
  /**
   * false: some sink's content could not be compared with what the state recorded (keyed with the
   * state key, which was not given); `drift` then lists only what needs no key.
   */
  driftKnown: boolean;
} & Expiry;

/**
 * What the state says of the expiry. Without a record the name was never checked; a record made by
 * a failed first check holds a null expiry that only means "not known yet".
 */
export function expiryKnown(record: StateRecord | undefined): boolean {
  return record !== undefined && !(record.expiresAt === null && record.consecutiveFailures > 0);
}

export function statusItem(
  status: TokenStatus,
  known: boolean,
  lookup: SinkLookup,
  read: Pick<StatusItem, 'authenticated' | 'driftKnown'>,
  policyId: PolicyIdOf,
): StatusItem {
  // A sink empty before the name's first delivery is not news (see DriftFinding.initial).
  const id = status.currentId === '-' ? null : status.currentId;
  const attention = status.lastError !== null || status.pending.length > 0 || status.drift.some((d) => !d.initial);
  return {
    name: status.name,
    id,
    ...policyId(status.name, id),
    health: attention ? 'attention' : known ? 'ok' : 'unknown',
    ...expiryOf(status.expiresAt, known),
    lastRotatedAt: status.lastRotatedAt,
    ...(known ? { dueAt: status.nextDueAt } : {}),
    pending: status.pending,
    consecutiveFailures: status.consecutiveFailures,
    backoffUntil: status.backoffUntil,
    lastError: status.lastError,
    serviceClockOffsetMs: status.serviceClockOffsetMs,
    drift: driftItems(status.name, status.drift, lookup),
    authenticated: read.authenticated,
    driftKnown: read.driftKnown,
  };
}

/**
 * Counted by `health`, in its words. `needsAttention`: every token not `ok` (unknown is not healthy
 * either: a name never checked has not been shown to work), as `status` exits 1 for them.
 */
export interface StatusSummary {
  total: number;
  ok: number;
  attention: number;
  unknown: number;
  needsAttention: number;
  /**
   * Items whose sinks could not all be compared (read without ROTATOR_STATE_KEY): their health
   * says nothing of whether every sink holds the current secret. A gate that must cover drift
   * checks this is 0 too.
   */
  driftNotKnown: number;
}

export function statusSummary(items: StatusItem[]): StatusSummary {
  const count = (health: StatusItem['health']) => items.filter((i) => i.health === health).length;
  const ok = count('ok');
  return {
    total: items.length,
    ok,
    attention: count('attention'),
    unknown: count('unknown'),
    needsAttention: items.length - ok,
    driftNotKnown: items.filter((i) => !i.driftKnown).length,
  };
}

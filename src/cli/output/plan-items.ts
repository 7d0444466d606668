import { isRepairable } from '../../policy/sink-drift.js';
import type { PlanEntry } from '../../rotation/plan.js';
import { type DriftItem, driftItems } from './drift-items.js';
import { type Expiry, expiryOf } from './expiry.js';
import type { PolicyIdOf } from './policy-id.js';
import type { ItemAction } from './run-items.js';
import type { SinkLookup } from './sink-ref.js';

/** One token of `plan`: what `once` would do now. */
export type PlanItem = {
  name: string;
  action: ItemAction;
  /** `failed`: the check itself failed, so nothing can be said of the token (see reason). */
  result: 'ok' | 'failed';
  /**
   * A person must see it: the check failed, or a sink cannot be read or holds what no run can
   * repair (what makes `plan`, and `once`, exit 1). A sink `once` would simply give the secret again is not.
   */
  needsAttention: boolean;
  reason: string;
  /** The id the service was asked about (null: a name no longer in the policy); `policyId`: see RunItem. */
  id: string | null;
  policyId?: string;
  /** When it is (or was) due; null: never; absent: not known. */
  dueAt?: string | null;
  drift: DriftItem[];
  /** `status`: the HTTP status the token service answered, when it answered one. */
  error?: { message: string; status?: number };
} & Expiry;

export function planItem(entry: PlanEntry, lookup: SinkLookup, policyId: PolicyIdOf): PlanItem {
  const failed = entry.action === 'error';
  const due = entry.action === 'skip' ? { dueAt: entry.dueAt } : entry.dueAt ? { dueAt: entry.dueAt } : {};
  const drift = driftItems(entry.name, entry.drift, lookup);
  const id = entry.id === '-' ? null : entry.id;
  return {
    name: entry.name,
    action: entry.action === 'error' ? 'none' : entry.action,
    result: failed ? 'failed' : 'ok',
    needsAttention: failed || drift.some((d) => !isRepairable(d)),
    reason: entry.reason,
    id,
    ...policyId(entry.name, id),
    ...expiryOf(entry.expiresAt, !failed || entry.expiresAt !== null),
    ...(failed ? {} : due),
    drift,
    ...(failed ? { error: { message: entry.reason, ...(entry.status !== undefined ? { status: entry.status } : {}) } } : {}),
  };
}

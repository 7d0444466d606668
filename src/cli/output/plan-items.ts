import type { PlanEntry } from '../../rotation/plan.js';
import { type DriftItem, driftItems } from './drift-items.js';
import { type Expiry, expiryOf } from './expiry.js';
import type { ItemAction } from './run-items.js';
import type { SinkLookup } from './sink-ref.js';

/** One token of `plan`: what `once` would do now. */
export type PlanItem = {
  name: string;
  action: ItemAction;
  /** `failed`: the check itself failed, so nothing can be said of the token (see reason). */
  result: 'ok' | 'failed';
  reason: string;
  /** null: a name no longer in the policy. */
  id: string | null;
  /** When it is (or was) due; null: never; absent: not known. */
  dueAt?: string | null;
  drift: DriftItem[];
  /** `status`: the HTTP status the token service answered, when it answered one. */
  error?: { message: string; status?: number };
} & Expiry;

export function planItem(entry: PlanEntry, lookup: SinkLookup): PlanItem {
  const failed = entry.action === 'error';
  const due = entry.action === 'skip' ? { dueAt: entry.dueAt } : entry.dueAt ? { dueAt: entry.dueAt } : {};
  return {
    name: entry.name,
    action: entry.action === 'error' ? 'none' : entry.action,
    result: failed ? 'failed' : 'ok',
    reason: entry.reason,
    id: entry.id === '-' ? null : entry.id,
    ...expiryOf(entry.expiresAt, !failed || entry.expiresAt !== null),
    ...(failed ? {} : due),
    drift: driftItems(entry.name, entry.drift, lookup),
    ...(failed ? { error: { message: entry.reason, ...(entry.status !== undefined ? { status: entry.status } : {}) } } : {}),
  };
}

export interface PlanSummary {
  total: number;
  rotate: number;
  skip: number;
  redeliver: number;
  failed: number;
}

export function planSummary(items: PlanItem[]): PlanSummary {
  return {
    total: items.length,
    rotate: items.filter((i) => i.action === 'rotate').length,
    skip: items.filter((i) => i.action === 'skip').length,
    redeliver: items.filter((i) => i.action === 'redeliver').length,
    failed: items.filter((i) => i.result === 'failed').length,
  };
}

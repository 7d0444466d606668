import type { HistoryView } from '../policy/decide.js';
import { MAX_LINEAGE, STATE_VERSION, type StateRecord } from './state-record.js';

export interface LineageResolution {
  record: StateRecord;
  /** Why the record is new, when it is: first adoption, or the policy pointing the name elsewhere. */
  adopted: 'new' | 'repointed' | undefined;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/**
 * Which token a name means now. The policy's id only starts a lineage: once we have rotated, the
 * current id is the one the last regeneration answered. A policy id that is in no part of the
 * lineage means the operator pointed the name at another token on purpose, and it is adopted.
 */
export function resolveLineage(policy: { name: string; id: string }, existing: StateRecord | undefined, now: Date): LineageResolution {
  const known =
    existing && (existing.adoptedId === policy.id || existing.currentId === policy.id || existing.lineage.some((l) => l.id === policy.id));
  if (existing && known) return { record: existing, adopted: undefined };
  const record: StateRecord = {
    version: STATE_VERSION,
    name: policy.name,
    currentId: policy.id,
    expiresAt: null,
    adoptedId: policy.id,
    adoptedAt: now.toISOString(),
    lastRotatedAt: null,
    consecutiveFailures: 0,
    lastFailure: null,
    serviceClock: null,
    lineage: existing
      ? [{ id: existing.currentId, replacedAt: now.toISOString(), expiresAt: existing.expiresAt }, ...existing.lineage].slice(
          0,
          MAX_LINEAGE,
        )
      : [],
  };
  return { record, adopted: existing ? 'repointed' : 'new' };
}

/** The record after a regeneration: the new id becomes current and the old one joins the lineage. */
export function recordRotation(
  record: StateRecord,
  rotation: { newId: string; newExpiresAt: Date | null; existingTokenExpiresAt: Date; now: Date },
): StateRecord {
  const replaced = {
    id: record.currentId,
    replacedAt: rotation.now.toISOString(),
    expiresAt: rotation.existingTokenExpiresAt.toISOString(),
  };
  return {
    ...record,
    currentId: rotation.newId,
    expiresAt: iso(rotation.newExpiresAt),
    lastRotatedAt: rotation.now.toISOString(),
    // The service may answer with the same id (older behaviour); it is then not a distinct ancestor.
    lineage: rotation.newId === record.currentId ? record.lineage : [replaced, ...record.lineage].slice(0, MAX_LINEAGE),
  };
}

export function historyOf(record: StateRecord): HistoryView {
  return {
    lastRotatedAt: record.lastRotatedAt ? new Date(record.lastRotatedAt) : null,
    adoptedAt: new Date(record.adoptedAt),
  };
}

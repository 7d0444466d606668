import type { HistoryView } from '../policy/decide.js';
import { MAX_LINEAGE, STATE_VERSION, type StateRecord } from './state-record.js';

export interface LineageResolution {
  record: StateRecord;
  /**
   * Why the record is new, when it is: first adoption, the policy pointing the name elsewhere, or no
   * record but sinks that say which token is current.
   */
  adopted: 'new' | 'repointed' | 'recovered' | undefined;
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

/**
 * A record rebuilt from what the sinks say (no state, but sinks carry a token id beside the secret):
 * that token is current, and the policy's id is an ancestor, so the policy does not read as a
 * deliberate repointing on the next run.
 */
export function recoveredLineage(
  policy: { name: string; id: string },
  from: { id: string; expiresAt?: string | null | undefined; rotatedAt?: string | undefined },
  now: Date,
): LineageResolution {
  const { record } = resolveLineage({ name: policy.name, id: from.id }, undefined, now);
  const rotatedAt = from.rotatedAt && !Number.isNaN(Date.parse(from.rotatedAt)) ? new Date(from.rotatedAt).toISOString() : null;
  const expiresAt = from.expiresAt && !Number.isNaN(Date.parse(from.expiresAt)) ? new Date(from.expiresAt).toISOString() : null;
  return {
    record: {
      ...record,
      adoptedId: policy.id,
      expiresAt,
      lastRotatedAt: rotatedAt,
      lineage: [{ id: policy.id, replacedAt: rotatedAt ?? now.toISOString(), expiresAt: null }],
    },
    adopted: 'recovered',
  };
}

/** The record after a regeneration: the new id becomes current and the old one joins the lineage. */
export function recordRotation(
  record: StateRecord,
  rotation: {
    newId: string;
    newExpiresAt: Date | null;
    existingTokenExpiresAt: Date;
    now: Date;
    /** Every sink (by target) that now holds the new secret, with its fingerprint. */
    sinks: Record<string, string>;
  },
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
    sinks: Object.fromEntries(
      Object.entries(rotation.sinks).map(([target, fingerprint]) => [
        target,
        { fingerprint, at: rotation.now.toISOString(), how: 'delivered' as const },
      ]),
    ),
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

/**
 * The record with the sinks it adopted (or gave the current secret again) added, and sinks no longer in the policy dropped (a sink
 * that comes back later is new again, and gets a secret).
 */
export function withAdoptedSinks(
  record: StateRecord,
  policyTargets: readonly string[],
  adopt: ReadonlyArray<{ target: string; fingerprint: string }>,
  now: Date,
  how: 'adopted' | 'delivered' = 'adopted',
): StateRecord {
  const kept = Object.entries(record.sinks ?? {}).filter(([target]) => policyTargets.includes(target));
  const adopted = adopt.map(({ target, fingerprint }) => [target, { fingerprint, at: now.toISOString(), how }] as const);
  return { ...record, sinks: Object.fromEntries([...kept, ...adopted]) };
}

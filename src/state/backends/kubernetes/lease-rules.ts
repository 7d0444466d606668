import type { ILeaseSpec } from 'kubernetes-models/coordination.k8s.io/v1/LeaseSpec';

import { microTime } from '../../../kubernetes/micro-time.js';

/** client-go's leader election timing, and its defaults. */
export interface LeaseTiming {
  /** How long a holder's lease lasts, as others observe it, after its last renewal. */
  leaseDurationMs: number;
  /** A holder that could not renew for this long gives the lease up as lost. */
  renewDeadlineMs: number;
  /** How often a holder renews, and a waiter looks again. */
  retryPeriodMs: number;
}

export const DEFAULT_LEASE_TIMING: LeaseTiming = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

/** The shortest lease that still leaves a renewal time to land: a second's retry in a three-second lease. */
export const MIN_LEASE_MS = 3_000;
export const MAX_LEASE_MS = 600_000;

/** client-go's proportions for another lease duration: renew deadline 2/3 of it, retry 2/15. */
export function leaseTiming(leaseDurationMs: number): LeaseTiming {
  return { leaseDurationMs, renewDeadlineMs: Math.round((leaseDurationMs * 2) / 3), retryPeriodMs: Math.round((leaseDurationMs * 2) / 15) };
}

/**
 * What this process has seen of a Lease: its record, and when, on this machine's clock, it last saw
 * it change. As in client-go, expiry is judged from that time and never from the renewTime in the
 * record, which another machine's clock wrote.
 */
export interface Observation {
  record: string;
  observedAt: number;
  /** Whether the record changed while we watched it: its holder is alive and renewing. */
  changed: boolean;
}

export function observe(previous: Observation | undefined, spec: ILeaseSpec | undefined, now: number): Observation {
  const record = JSON.stringify([
    spec?.holderIdentity ?? '',
    spec?.renewTime ?? '',
    spec?.acquireTime ?? '',
    spec?.leaseDurationSeconds ?? 0,
  ]);
  if (previous?.record === record) return previous;
  return { record, observedAt: now, changed: previous !== undefined };
}

/** Nobody holds it: never held, or released. */
export const isFree = (spec: ILeaseSpec | undefined) => !spec?.holderIdentity;

/** The lease's own duration, as its holder wrote it; ours when it gives none. */
const durationOf = (spec: ILeaseSpec | undefined, timing: LeaseTiming) =>
  spec?.leaseDurationSeconds ? spec.leaseDurationSeconds * 1000 : timing.leaseDurationMs;

/** Unchanged for its whole duration since we first saw it as it is: its holder is gone. */
export function isExpired(spec: ILeaseSpec | undefined, observation: Observation, now: number, timing: LeaseTiming): boolean {
  return observation.observedAt + durationOf(spec, timing) <= now;
}

/**
 * How long an acquisition waits. A holder seen renewing is alive: then `waitMs`, as asked. A lease
 * that has not moved may be a crashed holder's, which can only be taken over once it has stood still
 * for its duration: waiting that long (and one retry more) is what finds out.
 */
export function waitDeadline(
  startedAt: number,
  waitMs: number,
  spec: ILeaseSpec | undefined,
  observation: Observation,
  timing: LeaseTiming,
): number {
  if (observation.changed) return startedAt + waitMs;
  return Math.max(startedAt + waitMs, observation.observedAt + durationOf(spec, timing) + timing.retryPeriodMs);
}

export { microTime };

export function acquiredSpec(previous: ILeaseSpec | undefined, identity: string, at: Date, timing: LeaseTiming): ILeaseSpec {
  const transitions = previous?.leaseTransitions ?? 0;
  return {
    holderIdentity: identity,
    leaseDurationSeconds: Math.ceil(timing.leaseDurationMs / 1000),
    acquireTime: microTime(at),
    renewTime: microTime(at),
    leaseTransitions: previous?.holderIdentity && previous.holderIdentity !== identity ? transitions + 1 : transitions,
  };
}

export const renewedSpec = (spec: ILeaseSpec, at: Date): ILeaseSpec => ({ ...spec, renewTime: microTime(at) });

/** As client-go releases: no holder, and a duration of a second, so that nobody waits on it. */
export const releasedSpec = (spec: ILeaseSpec, at: Date): ILeaseSpec => ({
  ...spec,
  holderIdentity: '',
  leaseDurationSeconds: 1,
  acquireTime: microTime(at),
  renewTime: microTime(at),
});

import { describe, expect, it } from 'vitest';

import {
  acquiredSpec,
  DEFAULT_LEASE_TIMING,
  isExpired,
  isFree,
  leaseTiming,
  microTime,
  observe,
  releasedSpec,
  renewedSpec,
  waitDeadline,
} from '../../src/state/backends/kubernetes/lease-rules.js';

const timing = DEFAULT_LEASE_TIMING;
const held = (holder: string, renewTime: string) => ({
  holderIdentity: holder,
  leaseDurationSeconds: 15,
  renewTime,
  acquireTime: renewTime,
});

describe('lease rules (client-go leader election)', () => {
  it('has client-go defaults: lease 15 s, renew deadline 10 s, retry 2 s', () => {
    expect(timing).toEqual({ leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 });
  });

  it('judges expiry from when this process saw the record change, never from the renewTime another clock wrote', () => {
    // A renewTime an hour old, as a holder whose clock is an hour behind would write it.
    const spec = held('pod-a_1_x', '2026-11-22T09:00:00.000000Z');
    const first = observe(undefined, spec, 1_000);
    expect(isExpired(spec, first, 1_000, timing)).toBe(false);
    expect(isExpired(spec, first, 15_999, timing)).toBe(false);
    expect(isExpired(spec, observe(first, spec, 16_000), 16_000, timing)).toBe(true);
  });

  it('starts the clock again when the holder renews', () => {
    const first = observe(undefined, held('pod-a_1_x', '2026-11-22T10:00:00.000000Z'), 0);
    const renewed = held('pod-a_1_x', '2026-11-22T10:00:02.000000Z');
    const second = observe(first, renewed, 14_000);
    expect(second.changed).toBe(true);
    expect(isExpired(renewed, second, 20_000, timing)).toBe(false);
    expect(isExpired(renewed, second, 29_000, timing)).toBe(true);
  });

  it("uses the lease's own duration: a released lease (1 s) is waited on for no longer", () => {
    const spec = { ...held('pod-a_1_x', '2026-11-22T10:00:00.000000Z'), leaseDurationSeconds: 1 };
    const seen = observe(undefined, spec, 0);
    expect(isExpired(spec, seen, 999, timing)).toBe(false);
    expect(isExpired(spec, seen, 1_000, timing)).toBe(true);
  });

  it('treats a lease with no holder as free', () => {
    expect(isFree(undefined)).toBe(true);
    expect(isFree({ holderIdentity: '' })).toBe(true);
    expect(isFree(releasedSpec(held('a', 'x'), new Date(0)))).toBe(true);
    expect(isFree(held('a', 'x'))).toBe(false);
  });

  it('waits as asked for a holder seen renewing, and long enough to see a still one expire', () => {
    const still = observe(undefined, held('a', 't1'), 0);
    expect(waitDeadline(0, 2_000, held('a', 't1'), still, timing)).toBe(17_000);
    const renewing = observe(still, held('a', 't2'), 2_000);
    expect(waitDeadline(0, 2_000, held('a', 't2'), renewing, timing)).toBe(2_000);
    expect(waitDeadline(0, 60_000, held('a', 't1'), still, timing)).toBe(60_000);
    // The lease's own duration, which its expiry is judged by: a holder with a longer lease is waited on longer.
    expect(waitDeadline(0, 2_000, { ...held('a', 't1'), leaseDurationSeconds: 30 }, still, timing)).toBe(32_000);
  });

  it('counts a transition only when the holder changes', () => {
    const at = new Date('2026-11-22T10:00:00.123Z');
    const first = acquiredSpec(undefined, 'me', at, timing);
    expect(first).toEqual({
      holderIdentity: 'me',
      leaseDurationSeconds: 15,
      acquireTime: '2026-11-22T10:00:00.123000Z',
      renewTime: '2026-11-22T10:00:00.123000Z',
      leaseTransitions: 0,
    });
    expect(acquiredSpec({ ...first, holderIdentity: 'other', leaseTransitions: 4 }, 'me', at, timing).leaseTransitions).toBe(5);
    expect(acquiredSpec({ ...first, holderIdentity: '', leaseTransitions: 4 }, 'me', at, timing).leaseTransitions).toBe(4);
    expect(renewedSpec(first, new Date('2026-11-22T10:00:02Z')).renewTime).toBe('2026-11-22T10:00:02.000000Z');
  });

  it('writes MicroTime with six fractional digits, as the API server does', () => {
    expect(microTime(new Date('2026-01-02T03:04:05.678Z'))).toBe('2026-01-02T03:04:05.678000Z');
  });

  it("keeps client-go's proportions for another lease duration: renew deadline 2/3 of it, retry 2/15", () => {
    expect(leaseTiming(15_000)).toEqual(DEFAULT_LEASE_TIMING);
    expect(leaseTiming(3_000)).toEqual({ leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 400 });
  });

  it('sees any change of holder, renewal, acquisition or duration as the holder moving, and nothing else', () => {
    const base = held('pod-a_1_x', '2026-11-22T10:00:00.000000Z');
    const first = observe(undefined, base, 0);
    expect(first.changed, 'a first look is not a change').toBe(false);
    expect(observe(first, { ...base }, 5_000), 'the same record: the first observation stands').toBe(first);
    for (const moved of [
      { ...base, holderIdentity: 'pod-b_1_y' },
      { ...base, renewTime: '2026-11-22T10:00:02.000000Z' },
      { ...base, acquireTime: '2026-11-22T10:00:02.000000Z' },
      { ...base, leaseDurationSeconds: 30 },
    ]) {
      expect(observe(first, moved, 5_000)).toMatchObject({ changed: true, observedAt: 5_000 });
    }
  });

  it('reads a Lease whose fields are absent (as the API server omits empty ones) as the same record as one with them empty', () => {
    const omitted = observe(undefined, {}, 0);
    expect(observe(omitted, { holderIdentity: '', renewTime: '', acquireTime: '', leaseDurationSeconds: 0 }, 5_000)).toBe(omitted);
    const none = observe(undefined, undefined, 0);
    expect(observe(none, undefined, 5_000), 'no Lease at all, looked at twice').toBe(none);
    expect(observe(none, {}, 5_000)).toBe(none);
  });

  it('judges a Lease without a duration (or none at all) by our own lease duration', () => {
    const seen = observe(undefined, undefined, 0);
    expect(isExpired(undefined, seen, 14_999, timing)).toBe(false);
    expect(isExpired(undefined, seen, 15_000, timing)).toBe(true);
    expect(isExpired({ holderIdentity: 'a' }, seen, 14_999, timing)).toBe(false);
    expect(waitDeadline(0, 0, undefined, seen, timing)).toBe(17_000);
  });

  it('does not count a transition when the same holder acquires again', () => {
    const at = new Date('2026-11-22T10:00:00Z');
    const mine = { ...acquiredSpec(undefined, 'me', at, timing), leaseTransitions: 4 };
    expect(acquiredSpec(mine, 'me', at, timing).leaseTransitions).toBe(4);
  });

  it('releases as client-go does: no holder, a duration of a second, both times now, the transitions kept', () => {
    const at = new Date('2026-11-22T10:05:00.250Z');
    const before = { ...held('me', '2026-11-22T10:00:00.000000Z'), leaseTransitions: 3 };
    expect(releasedSpec(before, at)).toEqual({
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: '2026-11-22T10:05:00.250000Z',
      renewTime: '2026-11-22T10:05:00.250000Z',
      leaseTransitions: 3,
    });
  });
});

import { describe, expect, it } from 'vitest';

import {
  acquiredSpec,
  DEFAULT_LEASE_TIMING,
  isExpired,
  isFree,
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
});

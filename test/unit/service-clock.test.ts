import { describe, expect, it } from 'vitest';

import { describeSkew, offsetFromDateHeader } from '../../src/api/service-clock.js';
import { formatDuration } from '../../src/common/duration.js';

const HOUR = 3600_000;

describe('describeSkew', () => {
  it.each([
    ['a 2 h skew measured a little short (whole-second Date, slow answer)', 2 * HOUR - 506, '2h ahead of'],
    ['a 2 h skew measured a little long', 2 * HOUR + 900, '2h ahead of'],
    ['a 2 h skew behind, measured short', -(2 * HOUR - 1400), '2h behind'],
    ['5 minutes and a half second', 5 * 60_000 + 499, '5m ahead of'],
    ['1m 59.6s: seconds are shown below an hour', 119_600, '2m ahead of'],
    ['1h 30m 20s: minutes are the finest unit shown', 1.5 * HOUR + 20_000, '1h 30m ahead of'],
  ])('%s reads as %s', (_what, offsetMs, expected) => {
    expect(describeSkew(offsetMs, formatDuration)).toBe(expected);
  });
});

describe('offsetFromDateHeader', () => {
  it('takes the middle of the truncated second the Date header names', () => {
    const received = Date.parse('2026-11-25T12:00:00.000Z');
    expect(offsetFromDateHeader('Wed, 25 Nov 2026 14:00:00 GMT', received)).toBe(2 * HOUR + 500);
  });
  it('ignores a missing or unreadable header', () => {
    expect(offsetFromDateHeader(undefined, 0)).toBeUndefined();
    expect(offsetFromDateHeader('yesterday-ish', 0)).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';

import { formatDuration, parseDuration } from '../../src/common/duration.js';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

describe('parseDuration', () => {
  it.each([
    ['90s', 90 * S],
    ['15m', 15 * M],
    ['1h30m', H + 30 * M],
    ['7d', 7 * D],
    ['2w', 14 * D],
    ['1d12h', D + 12 * H],
    ['0s', 0],
    ['250ms', 250],
    ['P7D', 7 * D],
    ['PT1H30M', H + 30 * M],
    ['P1W', 7 * D],
    ['P1DT2H', D + 2 * H],
    ['PT0.5S', 500],
    [' 7d ', 7 * D],
  ])('reads %s', (text, ms) => {
    expect(parseDuration(text)).toEqual({ ok: true, ms });
  });

  it.each(['', '7', 'd', '7 days', '1h 30m', '-5m', 'P', 'PT', '7x', 'P1Y', 'P2M', 'P1Y2M3D'])('refuses %j', (text) => {
    const result = parseDuration(text);
    expect(result.ok).toBe(false);
  });

  it('says why months and years are refused', () => {
    expect(parseDuration('P1M')).toMatchObject({ ok: false, message: expect.stringContaining('no fixed length') });
  });

  it.each(['36500d', '5214w2d', 'P36500D', 'P5214W2D', '876000h', `${36500 * D}ms`])(
    'reads %s, the longest duration allowed (100 years)',
    (text) => {
      expect(parseDuration(text)).toEqual({ ok: true, ms: 36500 * D });
    },
  );

  it.each([
    // From now, past the last date a Date can hold (year 275760): every run would die on "Invalid time value".
    '20000000w',
    'P20000000W',
    '36500d1ms',
    'P36500DT1S',
    '5215w',
    '876001h',
    // Not safe integers: Number() would round them, so the value read would not be the value written.
    '9007199254740993ms',
    '99999999999999999999w',
    `${'9'.repeat(40)}s`,
    `PT${'9'.repeat(40)}.5S`,
  ])('refuses %s as too long rather than overflowing or rounding', (text) => {
    expect(parseDuration(text)).toEqual({
      ok: false,
      message: `'${text}' is too long: a duration may be at most 36500d (about 100 years)`,
    });
  });

  it('refuses a number too big for a double (it would read as Infinity) with the same message', () => {
    const text = `${'9'.repeat(400)}s`;
    expect(parseDuration(text)).toEqual({
      ok: false,
      message: `'${text}' is too long: a duration may be at most 36500d (about 100 years)`,
    });
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0s'],
    [90 * S, '1m 30s'],
    [3 * D + 4 * H + 5 * M, '3d 4h'],
    [15 * M, '15m'],
    [-2 * H, '-2h'],
    [400, '400ms'],
  ])('writes %d ms as %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

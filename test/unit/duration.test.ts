import { describe, expect, it } from 'vitest';

import { formatDuration, parseDuration } from '../../src/config/duration.js';

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

import { describe, expect, it } from 'vitest';

import { EmulatorUsageError, parseSeed } from '../src/index.js';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;
const HELP = 'a duration such as 90s, 15m, 1h30m, 7d, 2w or ISO 8601 P7D';

/** The problems a seed with this `latency` is refused for, as `path: message`. */
function problems(latency: unknown): string[] {
  try {
    parseSeed({ latency });
  } catch (error) {
    if (error instanceof EmulatorUsageError) return error.issues.map((issue) => `${issue.path}: ${issue.message}`);
    throw error;
  }
  throw new Error(`latency ${JSON.stringify(latency)} was accepted`);
}

// What `token-rotator emulator` read before the emulator became a package: seed files written for it must still start.
describe('a seed duration', () => {
  it.each([
    ['90s', 90 * S],
    ['15m', 15 * M],
    ['1h30m', H + 30 * M],
    ['7d', 7 * D],
    ['2w', 14 * D],
    ['1d12h', D + 12 * H],
    ['0s', 0],
    ['250ms', 250],
    ['1m30s250ms', M + 30 * S + 250],
    ['P7D', 7 * D],
    ['PT1H30M', H + 30 * M],
    ['P2D', 2 * D],
    ['P1W', 7 * D],
    ['P1DT2H', D + 2 * H],
    ['PT0.5S', 500],
    ['pt1h', H],
    [' 7d ', 7 * D],
    ['36500d', 36500 * D],
    ['P36500D', 36500 * D],
  ])('reads %j as %d ms', (text, ms) => {
    expect(parseSeed({ latency: text }).latency).toBe(ms);
    expect(parseSeed({ tokens: [{ name: 'a', expiresIn: text }] }).tokens[0]!.expiresIn).toBe(ms);
  });

  it.each(['7', 'd', '7 days', '1h 30m', '-5m', 'P', 'PT', '7x', '30m1h', '1h1h'])(
    'refuses %j, naming what a duration looks like',
    (text) => {
      expect(problems(text)).toEqual([`seed.latency: '${text}' is not ${HELP}`]);
    },
  );

  it('refuses an empty one', () => {
    expect(problems(' ')).toEqual([`seed.latency: empty; expected ${HELP}`]);
  });

  it.each(['P1Y', 'P2M', 'P1Y2M3D'])('refuses %j: months and years have no fixed length', (text) => {
    expect(problems(text)).toEqual([`seed.latency: '${text}': months and years have no fixed length; use days or weeks (P30D)`]);
  });

  // Added to the emulator's start, these would pass the seed and then stop it with "Invalid time value".
  it.each(['99999999999999d', '36500d1ms', 'P36500DT1S', '5215w', '9007199254740993ms', `${'9'.repeat(400)}s`])(
    'refuses %j as longer than 100 years',
    (text) => {
      expect(problems(text)).toEqual([`seed.latency: '${text}' is too long: a duration may be at most 36500d (about 100 years)`]);
    },
  );

  it.each([[5], [true], [null], [{ days: 2 }]])('refuses %j, which is not text, saying what a duration looks like', (value) => {
    expect(problems(value)).toEqual([`seed.latency: must be ${HELP}`]);
  });
});

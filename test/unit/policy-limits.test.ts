import { describe, expect, it } from 'vitest';

import { parsePolicy } from '../../src/config/load-policy.js';
import { policyProblems } from '../helpers/config-problems.js';

const FILE = '/etc/rotator/rotation.yaml';
const DAY = 86400_000;
const TOO_LONG = (text: string) => `'${text}' is too long: a duration may be at most 36500d (about 100 years)`;

const problems = (text: string) => policyProblems(text, FILE);

const withSettings = (settings: string) => `version: 1\ntokens: [{ name: a, id: "1", ${settings}, sinks: [{ type: file, path: a }] }]\n`;

describe('policy values that validate but could not run', () => {
  it('refuses a lifetime whose expiry would not be a date, instead of failing every run with "Invalid time value"', () => {
    expect(problems(withSettings('lifetime: 20000000w'))).toEqual([`tokens[0].lifetime: ${TOO_LONG('20000000w')}, or "never"`]);
  });

  it('refuses every duration setting past 100 years, each with its path, in one pass', () => {
    expect(
      problems(`version: 1
defaults: { overlap: 5215w }
tokens: [{ name: a, id: "1", renewBefore: P36501D, maxAge: 99999999999999999999d, sinks: [{ type: file, path: a }] }]
`),
    ).toEqual([
      `defaults.overlap: ${TOO_LONG('5215w')}`,
      `tokens[0].maxAge: ${TOO_LONG('99999999999999999999d')}, or "never"`,
      `tokens[0].renewBefore: ${TOO_LONG('P36501D')}, or a share such as "33%"`,
    ]);
  });

  it('refuses a jitter longer than 24 days: it is a timer delay, and a timer cannot wait longer than about 24.8 days', () => {
    const message = 'must be at most 24d: jitter is a timer delay, and a timer cannot wait longer than about 24.8 days';
    expect(problems(withSettings('jitter: 24d1ms'))).toEqual([`tokens[0].jitter: ${message}`]);
    expect(problems(`version: 1\ndefaults: { jitter: 4w }\ntokens: []\n`)).toEqual([`defaults.jitter: ${message}`]);
  });

  it('accepts a jitter of 24 days', () => {
    expect(parsePolicy(withSettings('jitter: 24d'), FILE).tokens[0]!.schedule.jitterMs).toBe(24 * DAY);
  });

  it('keeps now plus the longest of every setting a valid date with a 4-digit year', () => {
    const [token] = parsePolicy(withSettings('renewBefore: 36499d, overlap: 36500d, lifetime: 36500d, maxAge: P36500D'), FILE).tokens;
    const { renewBefore, overlapMs, lifetimeMs, maxAgeMs } = token!.settings;
    expect(renewBefore).toEqual({ kind: 'duration', ms: 36499 * DAY });
    expect([overlapMs, lifetimeMs, maxAgeMs]).toEqual([36500 * DAY, 36500 * DAY, 36500 * DAY]);
    // The runtime only ever adds some of these to "now"; all four together are about 400 years.
    const farthest = new Date(Date.now() + 36499 * DAY + overlapMs + lifetimeMs! + maxAgeMs!);
    expect(farthest.toISOString()).toMatch(/^\d{4}-\d\d-\d\dT/);
  });
});

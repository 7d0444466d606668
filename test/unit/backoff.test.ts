import { describe, expect, it } from 'vitest';

import { backoffUntil } from '../../src/policy/backoff.js';

const AT = new Date('2026-11-22T12:00:00Z');
const after = (ms: number) => new Date(AT.getTime() + ms);
const MIN = 60_000;

describe('backoffUntil', () => {
  it.each([
    { name: 'no failures: no backoff', failures: 0, until: null },
    { name: 'the first failure waits a minute', failures: 1, until: after(MIN) },
    { name: 'the second waits two', failures: 2, until: after(2 * MIN) },
    { name: 'the fourth waits eight', failures: 4, until: after(8 * MIN) },
    { name: 'many failures wait at most an hour', failures: 40, until: after(60 * MIN) },
  ])('$name', ({ failures, until }) => {
    expect(backoffUntil({ consecutiveFailures: failures, lastFailureAt: AT })).toEqual(until);
  });

  it('uses the given base and cap', () => {
    expect(backoffUntil({ consecutiveFailures: 3, lastFailureAt: AT }, { baseMs: 1000, capMs: 3000 })).toEqual(after(3000));
  });
});

import { describe, expect, it } from 'vitest';

import { regenerateWasApplied, rotationTimes } from '../../src/policy/rotation-times.js';

/**
 * After a regenerate whose answer was lost, the old token's expiry tells whether the service acted.
 * A wrong "not applied" regenerates again and leaves a second live secret; these rows are the
 * edges the main table (rotation-times.test.ts) does not reach.
 */
const NOW = new Date('2026-11-22T12:00:00Z');
const H = 3600_000;
const D = 24 * H;
const at = (ms: number) => new Date(NOW.getTime() + ms);

describe('regenerateWasApplied, at its edges', () => {
  it('a never-expiring old token that now ends, though not when we asked: applied', () => {
    expect(regenerateWasApplied({ before: null, sent: at(H), now: at(2 * H) })).toBe(true);
  });

  it('an old expiry moved by exactly one second is a move the service made: applied', () => {
    expect(regenerateWasApplied({ before: at(D), sent: at(H), now: at(D + 1000) })).toBe(true);
    expect(regenerateWasApplied({ before: at(D), sent: at(H), now: at(D - 1000) })).toBe(true);
  });

  it('an old expiry less than a second off its previous value is untouched (the service kept whole seconds): not applied', () => {
    expect(regenerateWasApplied({ before: at(D + 700), sent: at(H), now: at(D) })).toBe(false);
  });

  it('an expiry within a second of both what we sent and what it was: in doubt, applied, never a second secret', () => {
    const before = at(10 * 60_000 + 700);
    const { existingTokenExpiresAt: sent } = rotationTimes({ currentExpiresAt: before, overlapMs: H, lifetimeMs: D, now: NOW });
    const between = new Date(sent.getTime() + 850);
    expect(regenerateWasApplied({ before, sent, now: between })).toBe(true);
  });
});

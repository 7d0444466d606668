import { describe, expect, it } from 'vitest';
import { rotationTimes } from '../../src/policy/rotation-times.js';

const NOW = new Date('2026-11-22T12:00:00Z');
const H = 3600_000;
const D = 24 * H;
const at = (ms: number) => new Date(NOW.getTime() + ms);

describe('rotationTimes', () => {
  it.each([
    { name: 'the old token keeps working for the overlap when it would have lived longer', current: at(3 * D), overlap: H, existing: at(H) },
    { name: 'the overlap never extends a token that would have expired sooner', current: at(10 * 60_000), overlap: H, existing: at(10 * 60_000) },
    { name: 'a token that never expires gets exactly the overlap', current: null, overlap: H, existing: at(H) },
    { name: 'an overlap of zero ends the old token now', current: at(D), overlap: 0, existing: NOW },
    { name: 'an expired token keeps its past expiry rather than being revived', current: at(-H), overlap: H, existing: at(-H) },
  ])('$name', ({ current, overlap, existing }) => {
    const times = rotationTimes({ currentExpiresAt: current, overlapMs: overlap, lifetimeMs: 30 * D, now: NOW });
    expect(times.existingTokenExpiresAt).toEqual(existing);
    if (current) expect(times.existingTokenExpiresAt.getTime()).toBeLessThanOrEqual(current.getTime());
  });

  it('gives the new token its lifetime from now', () => {
    expect(rotationTimes({ currentExpiresAt: null, overlapMs: H, lifetimeMs: 30 * D, now: NOW }).newTokenExpiresAt).toEqual(at(30 * D));
  });

  it('sends null for a new token that never expires', () => {
    expect(rotationTimes({ currentExpiresAt: null, overlapMs: H, lifetimeMs: null, now: NOW }).newTokenExpiresAt).toBeNull();
  });
});

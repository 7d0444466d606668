import { describe, expect, it } from 'vitest';

import { regenerateWasApplied, rotationTimes } from '../../src/policy/rotation-times.js';

const NOW = new Date('2026-11-22T12:00:00Z');
const H = 3600_000;
const D = 24 * H;
const at = (ms: number) => new Date(NOW.getTime() + ms);

describe('rotationTimes', () => {
  it.each([
    {
      name: 'the old token keeps working for the overlap when it would have lived longer',
      current: at(3 * D),
      overlap: H,
      existing: at(H),
    },
    {
      name: 'the overlap never extends a token that would have expired sooner: it ends a second before',
      current: at(10 * 60_000),
      overlap: H,
      existing: at(10 * 60_000 - 1000),
    },
    {
      name: 'a clamped end is on a whole second, so a service keeping seconds still sees it moved',
      current: at(10 * 60_000 + 700),
      overlap: H,
      existing: at(10 * 60_000 - 1000),
    },
    { name: 'a token that never expires gets exactly the overlap', current: null, overlap: H, existing: at(H) },
    { name: 'an overlap of zero ends the old token now', current: at(D), overlap: 0, existing: NOW },
    { name: 'an expired token is not revived: its end stays in the past', current: at(-H), overlap: H, existing: at(-H - 1000) },
  ])('$name', ({ current, overlap, existing }) => {
    const times = rotationTimes({ currentExpiresAt: current, overlapMs: overlap, lifetimeMs: 30 * D, now: NOW });
    expect(times.existingTokenExpiresAt).toEqual(existing);
    if (current) expect(times.existingTokenExpiresAt.getTime()).toBeLessThan(current.getTime());
  });

  it('gives the new token its lifetime from now', () => {
    expect(rotationTimes({ currentExpiresAt: null, overlapMs: H, lifetimeMs: 30 * D, now: NOW }).newTokenExpiresAt).toEqual(at(30 * D));
  });

  it('sends null for a new token that never expires', () => {
    expect(rotationTimes({ currentExpiresAt: null, overlapMs: H, lifetimeMs: null, now: NOW }).newTokenExpiresAt).toBeNull();
  });
});

describe('regenerateWasApplied', () => {
  const sent = at(H);
  it.each([
    { name: 'the old token now ends when we asked: applied', before: at(D), now: at(H), applied: true },
    {
      name: 'the service kept only whole seconds of what we sent: applied',
      before: at(D),
      now: new Date(Math.floor(at(H).getTime() / 1000) * 1000),
      applied: true,
    },
    { name: 'the old token is gone: applied', before: at(D), now: undefined, applied: true },
    { name: 'nothing moved: not applied, trying again is safe', before: at(D), now: at(D), applied: false },
    { name: 'a never-expiring token still never expires: not applied', before: null, now: null, applied: false },
    { name: 'a never-expiring token now ends: applied', before: null, now: at(H), applied: true },
    { name: 'moved somewhere else entirely: assume applied, never risk a second secret', before: at(D), now: at(2 * H), applied: true },
  ])('$name', ({ before, now, applied }) => {
    expect(regenerateWasApplied({ before, sent, now })).toBe(applied);
  });
});

import { describe, expect, it } from 'vitest';

import { BUILT_IN_DEFAULTS } from '../../src/config/load-policy.js';
import type { RotationSettings } from '../../src/config/types.js';
import { decide, type HistoryView } from '../../src/policy/decide.js';

const NOW = new Date('2026-11-22T12:00:00Z');
const DAY = 24 * 3600_000;
const at = (offsetDays: number) => new Date(NOW.getTime() + offsetDays * DAY);

const freshHistory: HistoryView = { lastRotatedAt: null, adoptedAt: at(-1) };
const settings = (over: Partial<RotationSettings> = {}): RotationSettings => ({ ...BUILT_IN_DEFAULTS, ...over });

interface Case {
  name: string;
  expiresAt: Date | null;
  history?: Partial<HistoryView>;
  settings?: Partial<RotationSettings>;
  action: 'rotate' | 'skip';
  check: string;
  reason?: RegExp;
  dueAt?: Date | null;
}

const cases: Case[] = [
  {
    name: 'a token that expired yesterday is rotated as expired',
    expiresAt: at(-1),
    action: 'rotate',
    check: 'tokenExpired',
    reason: /^expired 1d ago/,
  },
  { name: 'a token that expires this very moment counts as expired', expiresAt: NOW, action: 'rotate', check: 'tokenExpired' },
  {
    name: 'a token expiring in 3 days is due with the default 7d renewBefore',
    expiresAt: at(3),
    action: 'rotate',
    check: 'tokenNearingExpiry',
    reason: /expires in 3d, within renewBefore 7d/,
    dueAt: at(-4),
  },
  {
    name: 'a token expiring in exactly 7 days is due (the window is inclusive)',
    expiresAt: at(7),
    action: 'rotate',
    check: 'tokenNearingExpiry',
  },
  {
    name: 'a token expiring in 8 days is not due, and due in 1 day',
    expiresAt: at(8),
    action: 'skip',
    check: 'notDue',
    reason: /expires in 8d; due in 1d/,
    dueAt: at(1),
  },
  {
    name: 'a per-token renewBefore of 10d makes a token 8 days from expiry due',
    expiresAt: at(8),
    settings: { renewBefore: { kind: 'duration', ms: 10 * DAY } },
    action: 'rotate',
    check: 'tokenNearingExpiry',
  },
  {
    name: 'a token that never expires is never due with maxAge: never',
    expiresAt: null,
    settings: { maxAgeMs: null },
    action: 'skip',
    check: 'notDue',
    reason: /never expires; maxAge is off \("never"\), so never due/,
    dueAt: null,
  },
  {
    name: 'a share of the lifetime uses the policy lifetime for a token we did not mint',
    expiresAt: at(9),
    settings: { renewBefore: { kind: 'share', percent: 33 }, lifetimeMs: 30 * DAY },
    action: 'rotate',
    check: 'tokenNearingExpiry',
    reason: /33% of lifetime \(9d 21h/,
  },
  {
    name: 'a share of the lifetime uses the real lifetime of a token we minted',
    // minted 10 days ago with a 100-day life: 33% is 33 days, and 90 days are left
    expiresAt: at(90),
    history: { lastRotatedAt: at(-10) },
    settings: { renewBefore: { kind: 'share', percent: 33 }, lifetimeMs: 30 * DAY },
    action: 'skip',
    check: 'notDue',
    dueAt: at(57),
  },
  {
    name: 'maxAge rotates a token last rotated longer ago than allowed',
    expiresAt: null,
    history: { lastRotatedAt: at(-91) },
    settings: { maxAgeMs: 90 * DAY },
    action: 'rotate',
    check: 'tokenOlderThanMaxAge',
    reason: /last rotated 91d ago, older than maxAge 90d/,
  },
  {
    name: 'maxAge counts from adoption for a token we never rotated',
    expiresAt: null,
    history: { adoptedAt: at(-5) },
    settings: { maxAgeMs: 30 * DAY },
    action: 'skip',
    check: 'notDue',
    dueAt: at(25),
  },
  {
    name: 'the earlier of expiry and maxAge sets the due date',
    expiresAt: at(20),
    history: { lastRotatedAt: at(-25) },
    settings: { maxAgeMs: 30 * DAY },
    action: 'skip',
    check: 'notDue',
    dueAt: at(5),
  },
  {
    name: 'an expired token is reported as expired even when maxAge also fired',
    expiresAt: at(-1),
    history: { lastRotatedAt: at(-100) },
    settings: { maxAgeMs: 90 * DAY },
    action: 'rotate',
    check: 'tokenExpired',
  },
];

describe('decide', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const decision = decide({
      token: { id: 't1', expiresAt: c.expiresAt },
      history: { ...freshHistory, ...c.history },
      settings: settings(c.settings),
      now: NOW,
    });
    expect(decision.action).toBe(c.action);
    expect(decision.check).toBe(c.check);
    if (c.reason) expect(decision.reason).toMatch(c.reason);
    if (c.dueAt !== undefined) expect(decision.dueAt).toEqual(c.dueAt);
  });
});

describe('decide, on sink drift', () => {
  const unmarked = { target: 'k8s:apps/a', sink: 'kubernetes-secret apps/a', kind: 'unmarked' as const, holdsCurrent: true as const };
  const decideDrift = (drift: Parameters<typeof decide>[0]['drift'], onDrift: RotationSettings['onDrift']) =>
    decide({ token: { id: 't1', expiresAt: at(60) }, history: freshHistory, settings: settings({ onDrift }), now: NOW, drift });

  it('never mints a token for a sink that only lost its marker, whatever onDrift says: writing it again restores it', () => {
    expect(decideDrift([unmarked], 'rotate')).toMatchObject({ action: 'redeliver', check: 'sinkDrift' });
    expect(decideDrift([unmarked], 'redeliver')).toMatchObject({ action: 'redeliver', check: 'sinkDrift' });
  });

  it('rotates under onDrift: rotate when a sink lacks the current secret', () => {
    expect(decideDrift([{ ...unmarked, kind: 'foreign', holdsCurrent: undefined }], 'rotate')).toMatchObject({ action: 'rotate' });
  });
});

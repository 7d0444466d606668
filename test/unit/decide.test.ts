import { describe, expect, it } from 'vitest';

import { BUILT_IN_DEFAULTS } from '../../src/config/load-policy.js';
import { decide, type HistoryView } from '../../src/policy/decide.js';
import type { RotationSettings } from '../../src/policy/rotation-settings.js';
import { describeDrift } from '../../src/policy/sink-drift.js';

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
    name: 'maxAge rotates a token exactly as old as allowed (the bound is inclusive)',
    expiresAt: null,
    history: { lastRotatedAt: at(-90) },
    settings: { maxAgeMs: 90 * DAY },
    action: 'rotate',
    check: 'tokenOlderThanMaxAge',
    dueAt: NOW,
  },
  {
    name: 'maxAge leaves a token one day younger than allowed, and says when it is due',
    expiresAt: null,
    history: { lastRotatedAt: at(-89) },
    settings: { maxAgeMs: 90 * DAY },
    action: 'skip',
    check: 'notDue',
    dueAt: at(1),
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
    name: 'a share of a lifetime that is never (refused by the policy) gives no window: the token is due when it expires',
    expiresAt: at(20),
    settings: { renewBefore: { kind: 'share', percent: 33 }, lifetimeMs: null },
    action: 'skip',
    check: 'notDue',
    reason: /^expires in 20d; due in 20d$/,
    dueAt: at(20),
  },
  {
    name: 'maxAge rotates a token that expires too, without saying it never expires',
    expiresAt: at(20),
    history: { lastRotatedAt: at(-31) },
    settings: { maxAgeMs: 30 * DAY },
    action: 'rotate',
    check: 'tokenOlderThanMaxAge',
    reason: /^last rotated 31d ago, older than maxAge 30d$/,
    dueAt: at(-1),
  },
  {
    name: 'a token that never expires is rotated at the default maxAge, counted from when it was first seen',
    expiresAt: null,
    history: { adoptedAt: at(-91) },
    action: 'rotate',
    check: 'tokenOlderThanMaxAge',
    reason:
      /^never expires; first seen 91d ago \(its age before that is unknown\), older than maxAge 90d \(default for tokens that never expire\)$/,
    dueAt: at(-1),
  },
  {
    name: 'a token that never expires is due by the default maxAge, and says which and since when',
    expiresAt: null,
    action: 'skip',
    check: 'notDue',
    reason: /^never expires; due in 89d by maxAge 90d \(default for tokens that never expire\); first seen 1d ago/,
    dueAt: at(89),
  },
  {
    name: 'a token that expires is due by the earlier maxAge, with no word of maxAge',
    expiresAt: at(20),
    history: { lastRotatedAt: at(-25) },
    settings: { maxAgeMs: 30 * DAY },
    action: 'skip',
    check: 'notDue',
    reason: /^expires in 20d; due in 5d$/,
    dueAt: at(5),
  },
  {
    name: 'a maxAge later than the renew window leaves the due date at the window',
    expiresAt: at(20),
    history: { lastRotatedAt: at(-10) },
    settings: { maxAgeMs: 60 * DAY },
    action: 'skip',
    check: 'notDue',
    reason: /^expires in 20d; due in 13d$/,
    dueAt: at(13),
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
  type Finding = NonNullable<Parameters<typeof decide>[0]['drift']>[number];
  const finding = (kind: Finding['kind'], sink: string, extra: Partial<Finding> = {}): Finding => ({
    target: `k8s:${sink}`,
    sink,
    kind,
    ...extra,
  });
  const unmarked = finding('unmarked', 'kubernetes-secret apps/a', { holdsCurrent: true });
  const foreign = finding('foreign', 'file /etc/b');
  const unreadable = finding('unreadable', 'vault kv/c', { detail: 'permission denied' });
  const unowned = finding('unowned', 'kubernetes-secret apps/d');

  interface DriftCase {
    name: string;
    drift: Finding[];
    onDrift: RotationSettings['onDrift'];
    secretUnknown?: string;
    expiresAt?: Date;
    action: 'rotate' | 'redeliver' | 'skip';
    check: string;
  }

  const driftCases: DriftCase[] = [
    {
      name: 'delivers the held secret again to a sink that lacks it',
      drift: [foreign],
      onDrift: 'redeliver',
      action: 'redeliver',
      check: 'sinkDrift',
    },
    {
      name: 'rotates under onDrift: rotate when a sink lacks the current secret',
      drift: [foreign],
      onDrift: 'rotate',
      action: 'rotate',
      check: 'sinkDrift',
    },
    { name: 'only reports drift under onDrift: report', drift: [foreign], onDrift: 'report', action: 'skip', check: 'notDue' },
    {
      name: 'rotates when the current secret is known nowhere: only a new token repairs the sink',
      drift: [foreign],
      onDrift: 'redeliver',
      secretUnknown: 'no copy in the state',
      action: 'rotate',
      check: 'sinkDrift',
    },
    {
      name: 'still only reports under onDrift: report when the current secret is unknown',
      drift: [foreign],
      onDrift: 'report',
      secretUnknown: 'no copy in the state',
      action: 'skip',
      check: 'notDue',
    },
    {
      name: 'never mints a token for a sink that only lost its marker, under onDrift: rotate',
      drift: [unmarked],
      onDrift: 'rotate',
      action: 'redeliver',
      check: 'sinkDrift',
    },
    {
      name: 'writes again a sink that only lost its marker, under onDrift: redeliver',
      drift: [unmarked],
      onDrift: 'redeliver',
      action: 'redeliver',
      check: 'sinkDrift',
    },
    {
      name: 'rotates under onDrift: rotate when a sink lost its marker and holds another secret',
      drift: [{ ...unmarked, holdsCurrent: undefined }],
      onDrift: 'rotate',
      action: 'rotate',
      check: 'sinkDrift',
    },
    {
      name: 'rotates under onDrift: rotate when one sink lost only its marker and another lacks the secret',
      drift: [unmarked, foreign],
      onDrift: 'rotate',
      action: 'rotate',
      check: 'sinkDrift',
    },
    {
      name: 'does not rotate for a marker-only sink next to one that cannot be read',
      drift: [unmarked, unreadable],
      onDrift: 'rotate',
      action: 'redeliver',
      check: 'sinkDrift',
    },
    {
      name: 'leaves alone sinks that delivering cannot repair (unreadable, unowned)',
      drift: [unreadable, unowned],
      onDrift: 'rotate',
      action: 'skip',
      check: 'notDue',
    },
    { name: 'does nothing when no sink drifted', drift: [], onDrift: 'rotate', action: 'skip', check: 'notDue' },
    {
      name: 'reports an expired token as expired, drift or not',
      drift: [foreign],
      onDrift: 'redeliver',
      expiresAt: at(-1),
      action: 'rotate',
      check: 'tokenExpired',
    },
    {
      name: 'reports a token nearing expiry as such, drift or not',
      drift: [foreign],
      onDrift: 'redeliver',
      expiresAt: at(2),
      action: 'rotate',
      check: 'tokenNearingExpiry',
    },
  ];

  const decideDrift = (c: Pick<DriftCase, 'drift' | 'onDrift' | 'secretUnknown' | 'expiresAt'>) =>
    decide({
      token: { id: 't1', expiresAt: c.expiresAt ?? at(60) },
      history: freshHistory,
      settings: settings({ onDrift: c.onDrift }),
      now: NOW,
      drift: c.drift,
      ...(c.secretUnknown === undefined ? {} : { secretUnknown: c.secretUnknown }),
    });

  it.each(driftCases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const decision = decideDrift(c);
    expect(decision.action).toBe(c.action);
    expect(decision.check).toBe(c.check);
    if (c.check === 'sinkDrift') {
      expect(decision.dueAt).toEqual(NOW);
      // The reason names each sink the decision repairs.
      for (const f of c.drift.filter((d) => d.kind !== 'unreadable' && d.kind !== 'unowned')) expect(decision.reason).toContain(f.sink);
    }
  });

  it('is not due when nothing was checked for drift', () => {
    expect(
      decide({ token: { id: 't1', expiresAt: at(60) }, history: freshHistory, settings: settings({ onDrift: 'rotate' }), now: NOW }),
    ).toMatchObject({
      action: 'skip',
      check: 'notDue',
    });
  });

  it('names every sink it repairs, and none it cannot', () => {
    const { reason } = decideDrift({ drift: [foreign, unreadable, unmarked], onDrift: 'redeliver' });
    expect(reason).not.toContain(unreadable.sink);
    // Each described whole, and kept apart from the next.
    const [first, second] = [describeDrift(foreign), describeDrift(unmarked)];
    expect(reason).toContain(first);
    expect(reason).toContain(second);
    expect(reason.indexOf(second)).toBeGreaterThan(reason.indexOf(first) + first.length);
  });

  it('says why the current secret is unknown when only a new token repairs a sink', () => {
    const { reason } = decideDrift({ drift: [foreign], onDrift: 'redeliver', secretUnknown: 'no copy in the state' });
    expect(reason).toContain('no copy in the state');
  });
});

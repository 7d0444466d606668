import { describe, expect, it } from 'vitest';

import {
  assessSinks,
  describeDrift,
  type DriftFinding,
  type HeldSecretView,
  isRepairable,
  repairable,
  type SinkAssessment,
  type SinkReading,
  type SinkRecord,
} from '../../src/policy/sink-drift.js';

/**
 * Fingerprints are opaque to assessSinks: `cur:x` is secret x under the current state key, `old:x`
 * under a previous key. The held secret is listed under every key of the run, the current first.
 */
const T = 'file:/etc/app/token';
const S = 'file /etc/app/token';
const held = (x: string): HeldSecretView => ({ fingerprints: [`cur:${x}`, `old:${x}`] });
const record = (fingerprint: string): SinkRecord => ({ fingerprint, at: '2026-11-01T00:00:00.000Z', how: 'delivered' });
const present = (fingerprints: string[], extra: { markerLost?: string; heldFor?: string } = {}): SinkReading => ({
  target: T,
  sink: S,
  state: 'present',
  fingerprints,
  ...extra,
});
const at = { target: T, sink: S };

interface Row {
  name: string;
  reading: SinkReading;
  /** undefined: a name seen for the first time (no record of any sink). */
  recorded: Record<string, SinkRecord> | undefined;
  held?: HeldSecretView;
  expected: SinkAssessment;
}

const none: SinkAssessment = { drift: [], adopt: [] };
const drift = (finding: Omit<DriftFinding, 'target' | 'sink'>): SinkAssessment => ({ drift: [{ ...at, ...finding }], adopt: [] });
const adopt = (fingerprint: string): SinkAssessment => ({ drift: [], adopt: [{ ...at, fingerprint }] });

const rows: Row[] = [
  // A write-only destination: only whether it was given the current secret can be known.
  {
    name: 'a write-only sink of a name seen for the first time is missing its first delivery',
    reading: { ...at, state: 'unchecked' },
    recorded: undefined,
    held: held('a'),
    expected: drift({ kind: 'missing', detail: 'write-only: not delivered to yet', initial: true }),
  },
  {
    name: 'a write-only sink the record never gave anything is new in the policy',
    reading: { ...at, state: 'unchecked' },
    recorded: {},
    held: held('a'),
    expected: drift({ kind: 'new' }),
  },
  {
    name: 'a write-only sink last given another secret holds a foreign one',
    reading: { ...at, state: 'unchecked' },
    recorded: { [T]: record('cur:b') },
    held: held('a'),
    expected: drift({ kind: 'foreign', detail: 'write-only: last given another secret' }),
  },
  {
    name: 'a write-only sink given the current secret under the current key is in step',
    reading: { ...at, state: 'unchecked' },
    recorded: { [T]: record('cur:a') },
    held: held('a'),
    expected: none,
  },
  {
    name: 'a write-only sink given the current secret under a previous key is in step (a key change is no drift)',
    reading: { ...at, state: 'unchecked' },
    recorded: { [T]: record('old:a') },
    held: held('a'),
    expected: none,
  },
  {
    name: 'a write-only sink with a record but no held secret to compare is left alone',
    reading: { ...at, state: 'unchecked' },
    recorded: { [T]: record('cur:b') },
    expected: none,
  },
  // Sinks that delivering cannot repair, or that are simply empty.
  {
    name: 'an unreadable sink is reported with its error, even on a first run',
    reading: { ...at, state: 'unreadable', error: 'EACCES' },
    recorded: undefined,
    expected: drift({ kind: 'unreadable', detail: 'EACCES' }),
  },
  {
    name: "another writer's destination is reported with why, even on a first run",
    reading: { ...at, state: 'unowned', reason: 'has no token-rotator label' },
    recorded: undefined,
    expected: drift({ kind: 'unowned', detail: 'has no token-rotator label' }),
  },
  {
    name: 'an empty sink on a first run is its first delivery',
    reading: { ...at, state: 'missing' },
    recorded: undefined,
    expected: drift({ kind: 'missing', initial: true }),
  },
  {
    name: 'an empty sink with a record is news: it was deleted',
    reading: { ...at, state: 'missing' },
    recorded: { [T]: record('cur:a') },
    held: held('a'),
    expected: drift({ kind: 'missing' }),
  },
  // Our sink, its marker gone (edited by hand).
  {
    name: 'a sink that lost its marker but holds the current secret is unmarked and holds it',
    reading: present(['cur:a', 'old:a'], { markerLost: 'no managed-by line' }),
    recorded: { [T]: record('cur:a') },
    held: held('a'),
    expected: drift({ kind: 'unmarked', detail: 'no managed-by line', holdsCurrent: true }),
  },
  {
    name: 'a sink that lost its marker and holds another secret is unmarked, not holding the current one',
    reading: present(['cur:b', 'old:b'], { markerLost: 'no managed-by line' }),
    recorded: { [T]: record('cur:a') },
    held: held('a'),
    expected: drift({ kind: 'unmarked', detail: 'no managed-by line' }),
  },
  {
    name: 'a sink that lost its marker, with no held secret to compare, is not said to hold the current one',
    reading: present(['cur:a'], { markerLost: 'no managed-by line' }),
    recorded: { [T]: record('cur:a') },
    expected: drift({ kind: 'unmarked', detail: 'no managed-by line' }),
  },
  // Content that is certainly not this name's secret.
  {
    name: "a sink holding another token's secret is foreign, and on a first run not adopted",
    reading: present(['cur:a'], { heldFor: 'other-token' }),
    recorded: undefined,
    held: held('a'),
    expected: drift({ kind: 'foreign', detail: 'it holds the secret of another token, "other-token"', initial: true }),
  },
  {
    name: "a sink holding another token's secret is foreign with a record too",
    reading: present(['cur:a'], { heldFor: 'other-token' }),
    recorded: { [T]: record('cur:a') },
    expected: drift({ kind: 'foreign', detail: 'it holds the secret of another token, "other-token"' }),
  },
  {
    name: 'a sink whose content has no secret in its format is foreign, and on a first run not adopted',
    reading: present([]),
    recorded: undefined,
    expected: drift({ kind: 'foreign', detail: 'it holds no secret in its format', initial: true }),
  },
  {
    name: 'a sink whose content has no secret in its format is foreign with a record too',
    reading: present([]),
    recorded: { [T]: record('cur:a') },
    held: held('a'),
    expected: drift({ kind: 'foreign', detail: 'it holds no secret in its format' }),
  },
  // With the secret held, a sink is compared with it directly.
  {
    name: 'a sink holding the current secret, recorded under the current key, is in step',
    reading: present(['cur:a', 'old:a']),
    recorded: { [T]: record('cur:a') },
    held: held('a'),
    expected: none,
  },
  {
    name: 'a sink holding the current secret, recorded under a previous key, is in step and recorded again',
    reading: present(['cur:a', 'old:a']),
    recorded: { [T]: record('old:a') },
    held: held('a'),
    expected: adopt('cur:a'),
  },
  {
    name: 'a sink holding the current secret with no record of it is in step and recorded',
    reading: present(['cur:a', 'old:a']),
    recorded: {},
    held: held('a'),
    expected: adopt('cur:a'),
  },
  {
    name: 'a sink holding the current secret on a first run is adopted',
    reading: present(['cur:a', 'old:a']),
    recorded: undefined,
    held: held('a'),
    expected: adopt('cur:a'),
  },
  {
    name: 'a recorded sink holding another secret is foreign, even if the record matches what it holds',
    reading: present(['cur:b', 'old:b']),
    recorded: { [T]: record('cur:b') },
    held: held('a'),
    expected: drift({ kind: 'foreign' }),
  },
  {
    name: 'a sink never given anything, holding another secret, is new in the policy',
    reading: present(['cur:b', 'old:b']),
    recorded: {},
    held: held('a'),
    expected: drift({ kind: 'new' }),
  },
  // Without the secret held (a record from before the state held secrets): the record decides.
  {
    name: 'without a held secret, content found on a first run is adopted as the current secret',
    reading: present(['cur:z', 'old:z']),
    recorded: undefined,
    expected: adopt('cur:z'),
  },
  {
    name: 'without a held secret, a sink the record never gave anything is new in the policy',
    reading: present(['cur:z']),
    recorded: {},
    expected: drift({ kind: 'new' }),
  },
  {
    name: 'without a held secret, a sink not holding what it was given is foreign',
    reading: present(['cur:z', 'old:z']),
    recorded: { [T]: record('cur:a') },
    expected: drift({ kind: 'foreign' }),
  },
  {
    name: 'without a held secret, a sink holding what it was given is in step',
    reading: present(['cur:a']),
    recorded: { [T]: record('cur:a') },
    expected: none,
  },
  {
    name: 'without a held secret, a sink holding what it was given under a previous key is in step',
    reading: present(['cur:a', 'old:a']),
    recorded: { [T]: record('old:a') },
    expected: none,
  },
];

describe('assessSinks', () => {
  it.each(rows.map((r) => [r.name, r] as const))('%s', (_name, r) => {
    expect(assessSinks([r.reading], r.recorded, r.held)).toStrictEqual(r.expected);
  });

  it('judges each sink on its own and keeps them in the order read', () => {
    const b = { target: 'file:/b', sink: 'file /b' };
    const c = { target: 'file:/c', sink: 'file /c' };
    const result = assessSinks(
      [
        { ...at, state: 'missing' },
        { ...b, state: 'present', fingerprints: ['cur:a'] },
        { ...c, state: 'present', fingerprints: ['cur:x'] },
      ],
      { [T]: record('cur:a'), [b.target]: record('old:a'), [c.target]: record('cur:a') },
      held('a'),
    );
    expect(result).toStrictEqual({
      drift: [
        { ...at, kind: 'missing' },
        { ...c, kind: 'foreign' },
      ],
      adopt: [{ ...b, fingerprint: 'cur:a' }],
    });
  });

  it('finds nothing when there are no sinks', () => {
    expect(assessSinks([], undefined, held('a'))).toStrictEqual(none);
  });
});

describe('which drift delivering repairs', () => {
  const finding = (kind: DriftFinding['kind']): DriftFinding => ({ ...at, kind });

  it.each(['missing', 'foreign', 'new', 'unmarked'] as const)('a %s sink is repaired by delivering', (kind) => {
    expect(isRepairable(finding(kind))).toBe(true);
  });

  it.each(['unreadable', 'unowned'] as const)('an %s sink is only reported', (kind) => {
    expect(isRepairable(finding(kind))).toBe(false);
  });

  it('keeps only the repairable findings, in order', () => {
    const all = (['unreadable', 'missing', 'unowned', 'foreign', 'new', 'unmarked'] as const).map(finding);
    expect(repairable(all).map((f) => f.kind)).toEqual(['missing', 'foreign', 'new', 'unmarked']);
  });
});

describe('how a drift finding is described to an operator', () => {
  const kinds = ['missing', 'foreign', 'new', 'unreadable', 'unowned', 'unmarked'] as const;

  it.each(kinds)('a %s sink is named, with nothing undefined in the text', (kind) => {
    const text = describeDrift({ ...at, kind });
    expect(text.startsWith(`${S} `)).toBe(true);
    expect(text.length).toBeGreaterThan(S.length + 3);
    expect(text).not.toMatch(/undefined|\(\)|: $/);
  });

  it.each(['missing', 'foreign', 'unreadable', 'unowned', 'unmarked'] as const)('a %s sink says what was found', (kind) => {
    expect(describeDrift({ ...at, kind, detail: 'DETAIL-42' })).toContain('DETAIL-42');
  });

  it.each(['missing', 'foreign', 'unreadable', 'unmarked'] as const)(
    'a %s sink without a detail is described as with one, less the detail',
    (kind) => {
      const without = describeDrift({ ...at, kind });
      const withDetail = describeDrift({ ...at, kind, detail: 'DETAIL-42' });
      // The two texts differ only in one piece, the one that holds the detail.
      let prefix = 0;
      while (prefix < without.length && without[prefix] === withDetail[prefix]) prefix++;
      let suffix = 0;
      while (suffix < without.length - prefix && without.at(-1 - suffix) === withDetail.at(-1 - suffix)) suffix++;
      expect(prefix + suffix).toBe(without.length);
      expect(withDetail.slice(prefix, withDetail.length - suffix)).toContain('DETAIL-42');
    },
  );

  it('tells the kinds apart', () => {
    expect(new Set(kinds.map((kind) => describeDrift({ ...at, kind }))).size).toBe(kinds.length);
  });

  it("says why another writer's destination is left alone when no reason was given", () => {
    expect(describeDrift({ ...at, kind: 'unowned' })).toMatch(/not managed by token-rotator/);
  });
});

/** What reading a sink back found. */
export type SinkReading =
  | { target: string; sink: string; state: 'missing' }
  /**
   * `fingerprints`: of what it holds, under the current state key first, then under each previous
   * key and unkeyed (a record written before a key change still matches). Empty: there is content,
   * but no secret this sink's format can find in it.
   */
  | {
      target: string;
      sink: string;
      state: 'present';
      fingerprints: readonly string[];
      /**
       * Read as another writer's (its marker gone: edited by hand), but the state records this name
       * delivering there, so it is ours: why the marker is missing. Drift until written again.
       */
      markerLost?: string;
      /**
       * Its metadata names another token, and the policy adopts it: what it holds is that token's
       * secret, never this one's current secret, so it is drift to be written over.
       */
      heldFor?: string;
    }
  | { target: string; sink: string; state: 'unreadable'; error: string }
  /** A write-only destination: what it holds cannot be known, only whether it was ever delivered to. */
  | { target: string; sink: string; state: 'unchecked' }
  /** There is content, but another writer's, which this sink will not replace (a Secret without our label). */
  | {
      target: string;
      sink: string;
      state: 'unowned';
      reason: string;
      /** The other token its metadata names, when that is why: never reclaimed by this name's record. */
      otherToken?: string;
    };

/** What the state remembers of a sink: the fingerprint of the secret it was given (or found holding). */
export interface SinkRecord {
  fingerprint: string;
  at: string;
  how: 'delivered' | 'adopted';
}

/**
 * A sink that does not hold the current secret: `missing`, holding something else (`foreign`),
 * `new` in the policy (nothing was ever delivered to it), `unmarked` (ours by the state's record,
 * but its ownership marker is gone: edited outside token-rotator), `unreadable` (it could not be
 * checked), or `unowned` (another writer's, which the sink refuses to replace). Delivering would not
 * help the last two, so they are reported, never acted on.
 */
export interface DriftFinding {
  target: string;
  sink: string;
  kind: 'missing' | 'foreign' | 'new' | 'unreadable' | 'unowned' | 'unmarked';
  detail?: string;
  /** Found before anything was delivered to the name (no record yet): its first delivery, not news. */
  initial?: true;
  /** `unmarked` only: it still holds the current secret, so writing it restores the marker and changes no consumer's value. */
  holdsCurrent?: true;
}

export interface SinkAssessment {
  drift: DriftFinding[];
  /**
   * Sinks whose content is taken as the current secret (a name's first run, a record older than
   * fingerprints), or found holding it without a record of it under the current key: recorded.
   */
  adopt: Array<{ target: string; sink: string; fingerprint: string }>;
}

/** The secret the state holds, by its fingerprints under every key of the run (the current key first). */
export interface HeldSecretView {
  fingerprints: readonly string[];
}

/**
 * Compares what each sink holds with the current secret. With the secret held (`held`), a sink is
 * compared with it directly, so a changed state key changes nothing; without it (a record from
 * before the state held secrets), with the fingerprint recorded when it was given. With no record
 * of the sinks (a name seen for the first time), content already there is adopted, and only an
 * empty sink is drift: so a new policy delivers everywhere without a manual rotate.
 */
export function assessSinks(
  readings: readonly SinkReading[],
  recorded: Readonly<Record<string, SinkRecord>> | undefined,
  held?: HeldSecretView,
): SinkAssessment {
  const drift: DriftFinding[] = [];
  const adopt: SinkAssessment['adopt'] = [];
  const initial = recorded === undefined ? { initial: true as const } : {};
  for (const reading of readings) {
    const { target, sink } = reading;
    const given = recorded?.[target];
    if (reading.state === 'unchecked') {
      // What it holds cannot be known; whether it was ever given the current secret can.
      if (recorded === undefined) drift.push({ target, sink, kind: 'missing', detail: 'write-only: not delivered to yet', ...initial });
      else if (given === undefined) drift.push({ target, sink, kind: 'new' });
      else if (held && !held.fingerprints.includes(given.fingerprint))
        drift.push({ target, sink, kind: 'foreign', detail: 'write-only: last given another secret' });
    } else if (reading.state === 'unreadable') {
      drift.push({ target, sink, kind: 'unreadable', detail: reading.error });
    } else if (reading.state === 'unowned') {
      drift.push({ target, sink, kind: 'unowned', detail: reading.reason });
    } else if (reading.state === 'missing') {
      drift.push({ target, sink, kind: 'missing', ...initial });
    } else if (reading.markerLost !== undefined) {
      const same = held !== undefined && reading.fingerprints[0] === held.fingerprints[0];
      drift.push({ target, sink, kind: 'unmarked', detail: reading.markerLost, ...(same ? { holdsCurrent: true as const } : {}) });
    } else if (reading.heldFor !== undefined) {
      drift.push({ target, sink, kind: 'foreign', detail: `it holds the secret of another token, "${reading.heldFor}"`, ...initial });
    } else if (reading.fingerprints.length === 0) {
      drift.push({ target, sink, kind: 'foreign', detail: 'it holds no secret in its format', ...initial });
    } else if (held) {
      const [now] = reading.fingerprints;
      if (now !== held.fingerprints[0]) drift.push({ target, sink, kind: given === undefined ? 'new' : 'foreign' });
      else if (given?.fingerprint !== now) adopt.push({ target, sink, fingerprint: now! });
    } else if (recorded === undefined) {
      adopt.push({ target, sink, fingerprint: reading.fingerprints[0]! });
    } else if (given === undefined) {
      drift.push({ target, sink, kind: 'new' });
    } else if (!reading.fingerprints.includes(given.fingerprint)) {
      drift.push({ target, sink, kind: 'foreign' });
    }
  }
  return { drift, adopt };
}

/** Whether delivering repairs it: not for a sink that could not be read, nor for another writer's destination. */
export const isRepairable = (finding: Pick<DriftFinding, 'kind'>) => finding.kind !== 'unreadable' && finding.kind !== 'unowned';

/** Drift that delivering the current secret repairs. */
export const repairable = (drift: readonly DriftFinding[]) => drift.filter(isRepairable);

export function describeDrift(finding: DriftFinding): string {
  switch (finding.kind) {
    case 'missing':
      return `${finding.sink} is missing${finding.detail ? ` (${finding.detail})` : ''}`;
    case 'foreign':
      return `${finding.sink} holds another secret${finding.detail ? ` (${finding.detail})` : ''}`;
    case 'new':
      return `${finding.sink} is new in the policy`;
    case 'unreadable':
      return `${finding.sink} cannot be read${finding.detail ? `: ${finding.detail}` : ''}`;
    case 'unowned':
      return `${finding.sink} ${finding.detail ?? 'is not managed by token-rotator'}`;
    case 'unmarked':
      return `${finding.sink} has lost its token-rotator marker${finding.detail ? ` (${finding.detail})` : ''}: edited outside token-rotator? It is ours by the state's record, so it is written again and marked`;
  }
}

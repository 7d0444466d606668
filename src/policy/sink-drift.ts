/** What reading a sink back found. */
export type SinkReading =
  | { target: string; sink: string; state: 'missing' }
  /** `fingerprint` undefined: there is content, but no secret this sink's format can find in it. */
  | { target: string; sink: string; state: 'present'; fingerprint: string | undefined }
  | { target: string; sink: string; state: 'unreadable'; error: string }
  /** A write-only destination: what it holds cannot be known, only whether it was ever delivered to. */
  | { target: string; sink: string; state: 'unchecked' }
  /** There is content, but another writer's, which this sink will not replace (a Secret without our label). */
  | { target: string; sink: string; state: 'unowned'; reason: string };

/** What the state remembers of a sink: the fingerprint of the secret it was given (or found holding). */
export interface SinkRecord {
  fingerprint: string;
  at: string;
  how: 'delivered' | 'adopted';
}

/**
 * A sink that does not hold the current secret: `missing`, holding something else (`foreign`),
 * `new` in the policy (nothing was ever delivered to it), `unreadable` (it could not be checked), or
 * `unowned` (another writer's, which the sink refuses to replace). Rotating would not help the last
 * two, so they are reported, never acted on.
 */
export interface DriftFinding {
  target: string;
  sink: string;
  kind: 'missing' | 'foreign' | 'new' | 'unreadable' | 'unowned';
  detail?: string;
  /** Found before anything was delivered to the name (no record yet): its first delivery, not news. */
  initial?: true;
}

export interface SinkAssessment {
  drift: DriftFinding[];
  /** Sinks whose content is taken as the current secret: on a name's first run, or from a record older than fingerprints. */
  adopt: Array<{ target: string; sink: string; fingerprint: string }>;
}

/**
 * Compares what each sink holds with what the state says it was given. With no record of the
 * sinks (a name seen for the first time), content already there is adopted as the current secret,
 * and only an empty sink is drift: so a new policy delivers everywhere without a manual rotate.
 */
export function assessSinks(readings: readonly SinkReading[], recorded: Readonly<Record<string, SinkRecord>> | undefined): SinkAssessment {
  const drift: DriftFinding[] = [];
  const adopt: SinkAssessment['adopt'] = [];
  const initial = recorded === undefined ? { initial: true as const } : {};
  for (const reading of readings) {
    const { target, sink } = reading;
    if (reading.state === 'unchecked') {
      // What it holds cannot be known; whether it was ever given the current secret can.
      if (recorded === undefined) drift.push({ target, sink, kind: 'missing', detail: 'write-only: not delivered to yet', ...initial });
      else if (recorded[target] === undefined) drift.push({ target, sink, kind: 'new' });
    } else if (reading.state === 'unreadable') {
      drift.push({ target, sink, kind: 'unreadable', detail: reading.error });
    } else if (reading.state === 'unowned') {
      drift.push({ target, sink, kind: 'unowned', detail: reading.reason });
    } else if (reading.state === 'missing') {
      drift.push({ target, sink, kind: 'missing', ...initial });
    } else if (reading.fingerprint === undefined) {
      drift.push({ target, sink, kind: 'foreign', detail: 'it holds no secret in its format', ...initial });
    } else if (recorded === undefined) {
      adopt.push({ target, sink, fingerprint: reading.fingerprint });
    } else if (recorded[target] === undefined) {
      drift.push({ target, sink, kind: 'new' });
    } else if (recorded[target].fingerprint !== reading.fingerprint) {
      drift.push({ target, sink, kind: 'foreign' });
    }
  }
  return { drift, adopt };
}

/** Whether rotating repairs it: not for a sink that could not be read, nor for another writer's destination. */
export const isRepairable = (finding: Pick<DriftFinding, 'kind'>) => finding.kind !== 'unreadable' && finding.kind !== 'unowned';

/** Drift that rotating repairs. */
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
  }
}

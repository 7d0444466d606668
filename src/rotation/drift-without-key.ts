import type { SinkReading } from '../policy/sink-drift.js';
import type { StateRecord } from '../state/state-record.js';

/** The target of an `exec` sink (`sinks/exec`): its read program's stderr is what its error says. */
const PROGRAM_TARGET = 'exec:';
const UNSCRUBBED =
  'its read program failed; what it said is shown only with ROTATOR_STATE_KEY, which lets it be masked of the current secret';

/**
 * The sinks' readings as `status` can judge them without the state key. A record written with a
 * key (it carries a MAC) remembers each sink by a fingerprint keyed with it, so what a sink holds
 * cannot be compared with it: such a sink is judged as a write-only one is (was it ever delivered
 * to?), and named in `notCompared`. Missing, unreadable, unowned or unmarked sinks, and sinks new
 * to the policy, need no key and are told as always. A record written without a key has unkeyed
 * fingerprints, which compare as they always did.
 */
export function readingsWithoutKey(
  readings: readonly SinkReading[],
  record: Pick<StateRecord, 'mac' | 'sinks'> | undefined,
): { readings: SinkReading[]; notCompared: string[] } {
  if (record?.mac === undefined || record.sinks === undefined) return { readings: [...readings], notCompared: [] };
  const notCompared: string[] = [];
  const judged = readings.map((reading): SinkReading => {
    // A program's own words may hold the current secret, which cannot be unsealed and so masked
    // without the key: only that it failed is said.
    if (reading.state === 'unreadable' && reading.target.startsWith(PROGRAM_TARGET)) return { ...reading, error: UNSCRUBBED };
    const comparable =
      reading.state === 'present' && reading.markerLost === undefined && reading.heldFor === undefined && reading.fingerprints.length > 0;
    if (!comparable) return reading;
    notCompared.push(reading.sink);
    return { target: reading.target, sink: reading.sink, state: 'unchecked' };
  });
  return { readings: judged, notCompared };
}

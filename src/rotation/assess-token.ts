import type { ServiceToken } from '../api/service-token.js';
import { isTokenId } from '../common/token-id.js';
import type { TokenPolicy } from '../config/types.js';
import { decide, type Decision } from '../policy/decide.js';
import { fingerprintOf } from '../policy/fingerprint.js';
import { assessSinks, type SinkAssessment, type SinkReading } from '../policy/sink-drift.js';
import type { StoredTokenMeta } from '../sinks/sink.js';
import { historyOf, type LineageResolution, recoveredLineage, resolveLineage } from '../state/lineage.js';
import type { RotationDeps } from './deps.js';
import { errorSummary } from './outcome.js';

/** Each sink of a name, read back: what it holds (by fingerprint) and what it says of the token. */
export interface SinkSnapshot {
  readings: SinkReading[];
  /** Metadata the sinks carry beside the secret (token id, expiry, rotation): a lost state is recovered from it. */
  metas: StoredTokenMeta[];
}

/** What a check found for a name: its record, the token, what its sinks hold, the decision. */
export interface Assessment {
  lineage: LineageResolution;
  token: ServiceToken;
  sinks: SinkAssessment;
  decision: Decision;
}

type ReadDeps = Pick<RotationDeps, 'sinks' | 'stateKey'>;

/** Reads every sink of the policy back. A sink that cannot be read is noted, never fatal. */
export async function snapshotSinks(policy: TokenPolicy, deps: ReadDeps, signal?: AbortSignal): Promise<SinkSnapshot> {
  const metas: StoredTokenMeta[] = [];
  const readings = await Promise.all(
    policy.sinks.map(async (config): Promise<SinkReading> => {
      const target = deps.sinks.target(config);
      const sink = deps.sinks.describe(config);
      if (!deps.sinks.readable(config)) return { target, sink, state: 'unchecked' };
      try {
        const content = await deps.sinks.read(config, { signal });
        if (!content) return { target, sink, state: 'missing' };
        if (content.unowned) return { target, sink, state: 'unowned', reason: content.unowned };
        if (content.meta) metas.push(content.meta);
        return { target, sink, state: 'present', fingerprint: content.secret ? fingerprintOf(content.secret, deps.stateKey) : undefined };
      } catch (error) {
        if ((error as Error)?.name === 'AbortError') throw error;
        return { target, sink, state: 'unreadable', error: errorSummary(error).message };
      }
    }),
  );
  return { readings, metas };
}

/**
 * Which token a name means now. With no record, the sinks' metadata may say: a state folder that was
 * lost, or is new to a policy that has run elsewhere, must not make the rotator start again from the
 * policy's original id (long replaced) while the current token sits in the sinks. The newest
 * rotation the sinks know of wins.
 */
export function lineageFor(
  policy: TokenPolicy,
  existing: Parameters<typeof resolveLineage>[1],
  snapshot: SinkSnapshot,
  now: Date,
): LineageResolution {
  if (existing) return resolveLineage(policy, existing, now);
  const newest = snapshot.metas
    .filter((m): m is StoredTokenMeta & { id: string } => isTokenId(m.id))
    // ISO times in UTC order as text; a plain comparison, not a locale's collation (which loads ICU data).
    .sort((a, b) => ((b.rotatedAt ?? '') > (a.rotatedAt ?? '') ? 1 : (b.rotatedAt ?? '') < (a.rotatedAt ?? '') ? -1 : 0))[0];
  if (!newest || newest.id === policy.id) return resolveLineage(policy, undefined, now);
  return recoveredLineage(policy, newest, now);
}

/**
 * The decision for a name whose record and token are known. Sinks are compared with the record's
 * fingerprints; a name seen for the first time (or whose record predates fingerprints, or that the
 * policy pointed at another token) adopts what its sinks already hold.
 */
export function decideFor(policy: TokenPolicy, lineage: LineageResolution, token: ServiceToken, snapshot: SinkSnapshot, now: Date) {
  const sinks = assessSinks(snapshot.readings, lineage.adopted ? undefined : lineage.record.sinks);
  const decision = decide({ token, history: historyOf(lineage.record), settings: policy.settings, now, drift: sinks.drift });
  return { sinks, decision };
}

/** The whole check of a name, changing nothing: for `plan`, and for a name another process holds. */
export async function assessToken(
  policy: TokenPolicy,
  deps: Pick<RotationDeps, 'api' | 'state' | 'clock' | 'sinks' | 'stateKey'>,
  options: { signal?: AbortSignal } = {},
): Promise<Assessment> {
  const [existing, snapshot] = await Promise.all([deps.state.read(policy.name), snapshotSinks(policy, deps, options.signal)]);
  const lineage = lineageFor(policy, existing, snapshot, deps.clock.now());
  const token = await deps.api.retrieve(lineage.record.currentId, options);
  return { lineage, token, ...decideFor(policy, lineage, token, snapshot, deps.clock.now()) };
}

import type { ServiceToken } from '../api/service-token.js';
import { isTokenId } from '../common/token-id.js';
import { decide, type Decision } from '../policy/decide.js';
import { fingerprintsOf } from '../policy/fingerprint.js';
import { assessSinks, type SinkAssessment, type SinkReading } from '../policy/sink-drift.js';
import type { Secret } from '../secret.js';
import { claimed, otherTokenReason } from '../sinks/ownership.js';
import type { StoredTokenMeta } from '../sinks/sink.js';
import { historyOf, type LineageResolution, recoveredLineage, resolveLineage } from '../state/lineage.js';
import type { StateRecord } from '../state/state-record.js';
import { type CurrentSecret, currentSecretFor, heldSecretOf } from './current-secret.js';
import { type RotationDeps, stateKeysOf } from './deps.js';
import { errorSummary } from './outcome.js';
import type { TokenSpec } from './token-spec.js';

/** Each sink of a name, read back: what it holds (by fingerprint) and what it says of the token. */
export interface SinkSnapshot {
  readings: SinkReading[];
  /** Metadata the sinks carry beside the secret (token id, expiry, rotation): a lost state is recovered from it. */
  metas: StoredTokenMeta[];
  /** What each sink that holds a secret holds, by target: a current secret may be adopted from it. Never leaves the process. */
  contents: Map<string, Secret>;
}

/** What a check found for a name: its record, the token, what its sinks hold, the decision. */
export interface Assessment {
  lineage: LineageResolution;
  token: ServiceToken;
  sinks: SinkAssessment;
  /** The current secret as this check knows it: what a redelivery delivers. */
  current: CurrentSecret;
  decision: Decision;
}

type ReadDeps = Pick<RotationDeps, 'sinks' | 'stateKey' | 'previousStateKeys'>;

/** Reads every sink of the policy back. A sink that cannot be read is noted, never fatal. */
export async function snapshotSinks(policy: TokenSpec, deps: ReadDeps, signal?: AbortSignal): Promise<SinkSnapshot> {
  const metas: StoredTokenMeta[] = [];
  const contents = new Map<string, Secret>();
  const keys = stateKeysOf(deps);
  const readings = await Promise.all(
    policy.sinks.map(async (config): Promise<SinkReading> => {
      const target = deps.sinks.target(config);
      const sink = deps.sinks.describe(config);
      if (!deps.sinks.readable(config)) return { target, sink, state: 'unchecked' };
      try {
        const content = await deps.sinks.read(config, { signal });
        if (!content) return { target, sink, state: 'missing' };
        if (content.unowned) return { target, sink, state: 'unowned', reason: content.unowned };
        const named = content.meta?.name;
        if (named !== undefined && named !== policy.name) {
          const reason = otherTokenReason(config, named, policy.name);
          // Another token's destination: refused, or (adopted) written over, but never taken for this one's.
          return reason
            ? { target, sink, state: 'unowned', reason, otherToken: named }
            : { target, sink, state: 'present', fingerprints: [], heldFor: named };
        }
        // Only metadata written for this name may say which token it is (recovery).
        if (content.meta && named === policy.name) metas.push(content.meta);
        return presentReading(target, sink, content.secret, contents, keys);
      } catch (error) {
        if ((error as Error)?.name === 'AbortError') throw error;
        return { target, sink, state: 'unreadable', error: errorSummary(error).message };
      }
    }),
  );
  return { readings, metas, contents };
}

/** A sink that holds something: its fingerprints, and what it holds kept aside for adoption. */
function presentReading(
  target: string,
  sink: string,
  secret: Secret | undefined,
  contents: Map<string, Secret>,
  keys: ReturnType<typeof stateKeysOf>,
): Extract<SinkReading, { state: 'present' }> {
  if (secret) contents.set(target, secret);
  return { target, sink, state: 'present', fingerprints: secret ? fingerprintsOf(secret, keys) : [] };
}

/**
 * Sinks read as another writer's (no marker of ours) that the record says this name delivered to
 * are ours all the same: read again as ours, and marked so the check repairs them (writing them
 * restores the marker). A destination never delivered to still needs its marker, or `adopt`.
 */
export async function reclaimRecorded(
  policy: TokenSpec,
  deps: ReadDeps,
  snapshot: SinkSnapshot,
  record: StateRecord | undefined,
  signal?: AbortSignal,
): Promise<SinkSnapshot> {
  const recorded = record?.sinks;
  if (!recorded) return snapshot;
  const reclaimable = (r: SinkReading): r is Extract<SinkReading, { state: 'unowned' }> =>
    r.state === 'unowned' && r.otherToken === undefined && recorded[r.target] !== undefined;
  if (!snapshot.readings.some(reclaimable)) return snapshot;
  const contents = new Map(snapshot.contents);
  const keys = stateKeysOf(deps);
  const readings = await Promise.all(
    snapshot.readings.map(async (reading, index): Promise<SinkReading> => {
      if (!reclaimable(reading)) return reading;
      const { target, sink } = reading;
      // Reasons are one line: what follows the advice is all advice.
      const markerLost = reading.reason.replace(/; set adopt: true.*/, '');
      try {
        const config = claimed(policy.sinks[index]!);
        const content = await deps.sinks.read(config, { signal });
        if (!content) return { target, sink, state: 'missing' };
        const otherToken = otherTokenReason(config, content.meta?.name, policy.name);
        if (otherToken) return { target, sink, state: 'unowned', reason: otherToken, otherToken: content.meta!.name! };
        return { ...presentReading(target, sink, content.secret, contents, keys), markerLost };
      } catch (error) {
        if ((error as Error)?.name === 'AbortError') throw error;
        return { target, sink, state: 'unreadable', error: errorSummary(error).message };
      }
    }),
  );
  return { ...snapshot, readings, contents };
}

/**
 * Which token a name means now. With no record, the sinks' metadata may say: a state folder that was
 * lost, or is new to a policy that has run elsewhere, must not make the rotator start again from the
 * policy's original id (long replaced) while the current token sits in the sinks. The newest
 * rotation the sinks know of wins.
 */
export function lineageFor(
  policy: TokenSpec,
  existing: Parameters<typeof resolveLineage>[1],
  snapshot: SinkSnapshot,
  now: Date,
): LineageResolution {
  if (existing) return resolveLineage(policy, existing, now);
  // ISO times in UTC order as text; a plain comparison, not a locale's collation (which loads ICU data).
  // Two with the same time are one rotation's, so one id: which is kept changes nothing.
  const newest = snapshot.metas
    .filter((m): m is StoredTokenMeta & { id: string } => isTokenId(m.id))
    .reduce<(StoredTokenMeta & { id: string }) | undefined>(
      (best, m) => (best === undefined || (m.rotatedAt ?? '') > (best.rotatedAt ?? '') ? m : best),
      undefined,
    );
  if (!newest || newest.id === policy.id) return resolveLineage(policy, undefined, now);
  return recoveredLineage(policy, newest, now);
}

/**
 * The decision for a name whose record and token are known. The sinks are compared with the
 * current secret the state holds; a name seen for the first time (or whose record predates held
 * secrets, or that the policy pointed at another token) adopts what its sinks already hold.
 */
export function decideFor(
  policy: TokenSpec,
  lineage: LineageResolution,
  token: ServiceToken,
  snapshot: SinkSnapshot,
  deps: Pick<RotationDeps, 'stateKey' | 'previousStateKeys'>,
  now: Date,
) {
  const keys = stateKeysOf(deps);
  const firstSight = lineage.adopted !== undefined;
  const recorded = firstSight ? undefined : lineage.record.sinks;
  const held = firstSight ? undefined : heldSecretOf(lineage.record, keys);
  const sinks = assessSinks(snapshot.readings, recorded, held?.known ? { fingerprints: fingerprintsOf(held.secret, keys) } : undefined);
  const current = held ?? currentSecretFor(lineage.record, firstSight, sinks, snapshot.contents, keys, now);
  const decision = decide({
    token,
    history: historyOf(lineage.record),
    settings: policy.settings,
    now,
    drift: sinks.drift,
    ...(current.known ? {} : { secretUnknown: current.why }),
  });
  return { sinks, current, decision };
}

/**
 * The whole check of a name, changing nothing: for `plan`, and for a name another process holds.
 * `asked.id` is set to the id the service is asked about (the state's current one) before it is
 * asked, so that a failure can name it.
 */
export async function assessToken(
  policy: TokenSpec,
  deps: Pick<RotationDeps, 'api' | 'state' | 'clock' | 'sinks' | 'stateKey' | 'previousStateKeys'>,
  options: { signal?: AbortSignal; asked?: { id?: string } } = {},
): Promise<Assessment> {
  const [existing, read] = await Promise.all([deps.state.read(policy.name), snapshotSinks(policy, deps, options.signal)]);
  const snapshot = await reclaimRecorded(policy, deps, read, existing, options.signal);
  const lineage = lineageFor(policy, existing, snapshot, deps.clock.now());
  if (options.asked) options.asked.id = lineage.record.currentId;
  const token = await deps.api.retrieve(lineage.record.currentId, options.signal ? { signal: options.signal } : {});
  return { lineage, token, ...decideFor(policy, lineage, token, snapshot, deps, deps.clock.now()) };
}

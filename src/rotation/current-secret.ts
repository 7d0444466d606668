import { StateKeyError } from '../errors.js';
import { fingerprintsOf } from '../policy/fingerprint.js';
import type { SinkAssessment } from '../policy/sink-drift.js';
import type { Secret } from '../secret.js';
import { describeSeal, keyIdOf, openSecret, sealedAsCurrent, sealSecret, type StateKeys } from '../state/secret-box.js';
import type { StateRecord } from '../state/state-record.js';
import { sealContext } from './seal-context.js';

/**
 * The current token's secret as this check knows it: held in the state record (sealed), or adopted
 * from what the sinks hold. Unknown only when neither has it: then, and only then, a sink that lacks
 * it can be repaired by nothing but a new token.
 */
export type CurrentSecret =
  | {
      known: true;
      secret: Secret;
      how: 'rotated' | 'adopted';
      rotationId: string;
      at: string;
      /** Not yet in the record as the current key would store it (adopted now, or sealed by a previous key): write it. */
      store: boolean;
    }
  | { known: false; why: string };

/** `adopted:<name>@<time>`: the "rotation" an adopted secret is known by to the sinks it is given to. */
const adoptedRotationId = (name: string, at: string) => `${name}@adopted:${at}`;

/**
 * Opens the secret the record holds with the run's keys. A key that opens nothing is a
 * configuration error naming the variables, never a reason to rotate: the secret is there, and the
 * operator has the key that sealed it somewhere.
 */
export function heldSecretOf(record: StateRecord, keys: StateKeys): CurrentSecret | undefined {
  if (!record.secret) return undefined;
  const { value } = record.secret;
  const opened = openSecret(value, keys, sealContext(record.name, record.currentId));
  if (opened === 'no-key') {
    throw new StateKeyError(
      `the state of "${record.name}" holds its current secret ${describeSeal(value)}; set ROTATOR_STATE_KEY to that key ` +
        `(or give it in ROTATOR_STATE_KEY_PREVIOUS): nothing is rotated for a missing key`,
    );
  }
  if (opened === 'wrong-key') {
    const ids = [keys.current, ...keys.previous].flatMap((key) => (key ? [keyIdOf(key)] : [])).join(', ');
    throw new StateKeyError(
      `no key in ROTATOR_STATE_KEY or ROTATOR_STATE_KEY_PREVIOUS (ids ${ids}) opens the current secret of "${record.name}", ` +
        `${describeSeal(value)}: give that key in ROTATOR_STATE_KEY_PREVIOUS. Nothing is rotated for a missing key; ` +
        `to start over with a new token instead, run: token-rotator rotate ${record.name}`,
    );
  }
  return {
    known: true,
    secret: opened,
    how: record.secret.how,
    rotationId: record.secret.rotationId,
    at: record.secret.at,
    store: !sealedAsCurrent(value, keys.current),
  };
}

/**
 * The current secret for a check whose record holds none (`heldSecretOf` answered undefined): one
 * the sinks agree on that the record's fingerprints (or, on a name's first sight, nothing) say is
 * current. Two sinks holding different secrets leave it unknown: which one works cannot be told
 * without trying them.
 */
export function currentSecretFor(
  record: StateRecord,
  firstSight: boolean,
  assessment: SinkAssessment,
  contents: ReadonlyMap<string, Secret>,
  keys: StateKeys,
  now: Date,
): CurrentSecret {
  // On first sight every sink with content is adopted; from an older record, those whose content
  // matched the fingerprint it recorded for them.
  const candidates = (firstSight ? assessment.adopt : matchedLegacySinks(record, contents, keys)).flatMap(
    (a) => contents.get(a.target) ?? [],
  );
  const distinct = new Map(candidates.map((secret) => [fingerprintsOf(secret, keys)[0]!, secret]));
  if (distinct.size > 1) return { known: false, why: 'the sinks hold different secrets and the state holds none' };
  if (distinct.size === 1) {
    const at = now.toISOString();
    return {
      known: true,
      secret: [...distinct.values()][0]!,
      how: 'adopted',
      rotationId: adoptedRotationId(record.name, at),
      at,
      store: true,
    };
  }
  return {
    known: false,
    why: firstSight
      ? 'first sight of this name, and no sink holds a secret to adopt'
      : 'the state holds no copy of it and no sink holds it',
  };
}

/** Sinks whose content is the secret an older record (with fingerprints, no secret) says they were given. */
function matchedLegacySinks(record: StateRecord, contents: ReadonlyMap<string, Secret>, keys: StateKeys): Array<{ target: string }> {
  return Object.entries(record.sinks ?? {})
    .filter(([target, given]) => {
      const content = contents.get(target);
      return content !== undefined && fingerprintsOf(content, keys).includes(given.fingerprint);
    })
    .map(([target]) => ({ target }));
}

/** The record's `secret` for a known current secret, sealed with the current key. */
export function storedCurrentSecret(
  name: string,
  currentId: string,
  current: Extract<CurrentSecret, { known: true }>,
  keys: StateKeys,
): NonNullable<StateRecord['secret']> {
  return {
    value: sealSecret(current.secret, keys.current, sealContext(name, currentId)),
    how: current.how,
    rotationId: current.rotationId,
    at: current.at,
  };
}

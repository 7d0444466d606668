import { SinkError } from '../errors.js';
import { remoteText } from '../http/remote-text.js';

/** Set on a config claimed from the state's record, never by a policy: see `adoptsOtherTokens`. */
const RECLAIMED = Symbol('reclaimed');

/**
 * The config as for a destination the state records this name delivering to: its ownership marker
 * may be gone (a Secret re-created by hand, a version added without tags, custom metadata
 * replaced), but it is still ours to write, and writing it restores the marker. Sink types that
 * carry no marker (files, programs) are returned as they are.
 */
export function claimed<C extends { type: string }>(config: C): C {
  return 'adopt' in config && config.adopt !== true ? { ...config, adopt: true, [RECLAIMED]: true } : config;
}

/** Whether the policy itself says to take the destination over (`adopt: true`), not only the state's record. */
function adoptsOtherTokens(config: object): boolean {
  return 'adopt' in config && config.adopt === true && !(RECLAIMED in config);
}

/**
 * Why a destination whose metadata names another token is not this token's: two tokens on one
 * destination would overwrite each other at every run, each regenerating the other's token. Only
 * `adopt: true` in the policy takes it over; undefined when it names this token, none, or is adopted.
 * A sink type without an `adopt` option (a file's or a program's json) never takes it over.
 */
export function otherTokenReason(config: object, markedName: string | undefined, name: string): string | undefined {
  if (markedName === undefined || markedName === name) return undefined;
  if (!('adopt' in config)) {
    return (
      `its metadata names another token, "${remoteText(markedName, 64)}", not "${remoteText(name, 64)}", and it cannot be ` +
      `taken over: remove what is there, or give one of the two tokens another destination`
    );
  }
  if (adoptsOtherTokens(config)) return undefined;
  return (
    `its metadata names another token, "${remoteText(markedName, 64)}", not "${remoteText(name, 64)}": ` +
    `set adopt: true on the sink to take it over for "${remoteText(name, 64)}"`
  );
}

/** A write to a destination that names another token is refused, whoever's record says it was delivered to. */
export function refuseOtherToken(config: object, markedName: string | undefined, name: string, describe: string): void {
  const reason = otherTokenReason(config, markedName, name);
  if (reason) throw new SinkError(`refusing to write ${describe}: ${reason}`);
}

import type { KeyObject } from 'node:crypto';

import { StateIntegrityError, StateKeyError } from '../errors.js';
import { type DocumentKind, macMatches, macOf } from './document-mac.js';
import type { JournalEntry } from './journal-entry.js';
import { keyIdOf, type StateKeys, type StoredSecret } from './secret-box.js';
import type { StateBackend } from './state-backend.js';
import type { StateRecord } from './state-record.js';

/** How a run authenticates what it reads from state, and what it writes. */
export interface StateAuthentication {
  keys: StateKeys;
  /**
   * `none` in ROTATOR_STATE_KEY_PREVIOUS: documents no key authenticates (written without a key, or
   * by a token-rotator from before state authentication) are accepted for this run, and
   * authenticated with the current key at their next write. Off otherwise: such a document is
   * refused, as anyone who can write the state could have planted it.
   */
  acceptUnauthenticated: boolean;
  /** Told of each document accepted that way, so the operator sees what was accepted unchecked. */
  onAcceptedUnauthenticated?(what: string): void;
}

/**
 * Set on documents accepted under a previous key or none: the next check writes them again. An
 * own enumerable symbol, so it survives the copies made of a record on its way (`{ ...record }`)
 * and never reaches the stored JSON.
 */
const NOT_BY_CURRENT_KEY = Symbol('not authenticated by the current key');
const flagged = <T extends object>(document: T): T => ({ ...document, [NOT_BY_CURRENT_KEY]: true });

/**
 * Whether a record or entry was read without the current key's MAC: the check that read a record
 * writes it again, and such an entry is not taken as written by token-rotator.
 */
export const needsAuthenticating = (document: StateRecord | JournalEntry): boolean => NOT_BY_CURRENT_KEY in document;

const WHAT: Record<DocumentKind, string> = { record: 'state record', journal: 'journal entry' };

/**
 * The backend with every record and journal entry authenticated as a whole whenever a state key is
 * set: written with a MAC of the current key; read only when a key of the ring vouches for it, so a
 * planted entry (another secret, other ids) is refused before anything is delivered. Without any
 * key it is the backend itself: a 0600 file is then all that protects the state.
 */
export function authenticatedState(backend: StateBackend, auth: StateAuthentication): StateBackend {
  const { current, previous } = auth.keys;
  if (!current && previous.length === 0) return backend;
  const ring = [...(current ? [current] : []), ...previous];
  const check = <T extends { name: string; mac?: unknown }>(kind: DocumentKind, name: string, where: string, document: T | undefined) =>
    document === undefined ? undefined : verified(kind, name, where, document, ring, auth);
  const sign = <T extends { name: string; mac?: unknown }>(kind: DocumentKind, document: T): T => {
    const { mac: _old, ...rest } = document;
    return (current ? { ...rest, mac: macOf(kind, document.name, rest, current) } : rest) as T;
  };
  return {
    ...backend,
    state: {
      ...backend.state,
      read: async (name) => check('record', name, `of "${name}" in ${backend.state.describe()}`, await backend.state.read(name)),
      write: (record: StateRecord) => backend.state.write(sign('record', record)),
    },
    journal: {
      ...backend.journal,
      read: async (name) => check('journal', name, backend.journal.describe(name), await backend.journal.read(name)),
      write: (entry: JournalEntry, options) => backend.journal.write(sign('journal', entry), options),
    },
  };
}

function verified<T extends { name: string; mac?: unknown }>(
  kind: DocumentKind,
  name: string,
  where: string,
  document: T,
  ring: readonly KeyObject[],
  auth: StateAuthentication,
): T {
  const what = `the ${WHAT[kind]} ${where}`;
  const mac = document.mac as Parameters<typeof macMatches>[3] | undefined;
  if (!mac) {
    const plain = holdsPlainSecret(document) ? ' and holds a plaintext secret' : '';
    // A journal entry's secret is about to be delivered everywhere: one in plaintext is refused even
    // so, since accepting it would deliver whatever was planted. Finished without a key, it is gone.
    if (auth.acceptUnauthenticated && !(kind === 'journal' && plain)) {
      auth.onAcceptedUnauthenticated?.(what);
      return flagged(document);
    }
    if (auth.acceptUnauthenticated) {
      throw new StateIntegrityError(
        `${what} holds a plaintext secret and is not authenticated by the state key; ROTATOR_STATE_KEY_PREVIOUS=none does ` +
          `not accept an unfinished rotation's secret, which would be delivered everywhere. If it is yours, finish that ` +
          `rotation without ROTATOR_STATE_KEY (run once), then set the key; otherwise find out who wrote it`,
      );
    }
    throw new StateIntegrityError(
      `${what} is not authenticated by the state key${plain}: written by someone else, or without a key or by a token-rotator ` +
        `from before state authentication. Nothing of it is used and nothing is delivered for "${name}". If it is yours, ` +
        `run once with ROTATOR_STATE_KEY_PREVIOUS=none to accept it (it is then authenticated with the current key); ` +
        `otherwise find out who wrote it before removing it, as it may hold a secret`,
    );
  }
  const key = ring.find((k) => keyIdOf(k) === mac.kid);
  if (!key) {
    throw new StateKeyError(
      `${what} cannot be opened with ROTATOR_STATE_KEY or ROTATOR_STATE_KEY_PREVIOUS (ids ${ring.map(keyIdOf).join(', ')}): ` +
        `it was written with the key whose id is ${mac.kid}; give that key in ROTATOR_STATE_KEY_PREVIOUS. Nothing is rotated for a missing key`,
    );
  }
  if (!macMatches(kind, name, document, mac, key)) {
    throw new StateIntegrityError(
      `${what} was changed outside token-rotator: its MAC does not match what it holds. Nothing of it is used and ` +
        `nothing is delivered for "${name}". Find out who can write it; do not remove it before checking, as it may hold a secret`,
    );
  }
  const { mac: _checked, ...rest } = document;
  return (key === auth.keys.current ? rest : flagged(rest)) as T;
}

function holdsPlainSecret(document: object): boolean {
  const stored: Array<StoredSecret | undefined> = [
    (document as Partial<StateRecord>).secret?.value,
    (document as { staged?: { secret?: StoredSecret } }).staged?.secret,
    (document as { held?: { secret?: StoredSecret } }).held?.secret,
  ];
  return stored.some((s) => s !== undefined && 'plain' in s);
}

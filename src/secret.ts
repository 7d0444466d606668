import { inspect } from 'node:util';

import { REDACTED } from './scrub/masked-text.js';
import { MIN_FRAGMENT } from './scrub/secret-forms.js';
import { SecretMatcher } from './scrub/secret-matcher.js';

/**
 * Every secret value this process has held, so that everything it lets in from outside (a
 * program's output, a peer's answer) and everything it writes out (logs, errors, output, state,
 * notifications) can be scrubbed of it, even if some code path forgot to keep it wrapped. Bounded so a
 * long-lived daemon does not grow: the least recently used (wrapped or revealed) is forgotten first.
 */
const knownSecretValues = new Set<string>();
const MAX_KNOWN_SECRETS = 1000;
const matcher = new SecretMatcher();
/**
 * Known values not indexed yet: indexing one costs some twenty microseconds, and a run over thousands
 * of names makes (and forgets) more secrets than it scrubs lines; each is indexed before the next scrub.
 */
const unindexed = new Set<string>();

function remember(value: string): void {
  if (value.length < MIN_FRAGMENT) return;
  // Known already (every request's bearer is revealed): only made the newest, not indexed again.
  if (knownSecretValues.delete(value)) {
    knownSecretValues.add(value);
    return;
  }
  knownSecretValues.add(value);
  unindexed.add(value);
  if (knownSecretValues.size > MAX_KNOWN_SECRETS) {
    const oldest = knownSecretValues.values().next().value!;
    knownSecretValues.delete(oldest);
    if (!unindexed.delete(oldest)) matcher.delete(oldest);
  }
}

/**
 * Replaces every known secret in `text`: as itself, JSON-escaped, in base64 or hex, also broken over
 * lines or spaces, and any piece of 8 characters or more (12 of base64, 16 of hex) of a secret that is
 * key material rather than words (see src/scrub). Text from outside is scrubbed where it is let in,
 * before it is cut or joined; everything written out is scrubbed again, the last line of defence.
 */
export function scrubSecrets(text: string): string {
  for (const value of unindexed) matcher.add(value);
  unindexed.clear();
  return matcher.scrub(text);
}

/**
 * A secret value that cannot be printed by accident: string conversion, JSON and `util.inspect`
 * all give `[REDACTED]`. Only `reveal()` gives the value, and only sinks and HTTP headers call it.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
    remember(value);
  }

  reveal(): string {
    // In use again: the newest to forget. A credential read once at start (the client secret, a
    // webhook URL) would otherwise leave the bounded list after a thousand newer secrets, in a
    // daemon that keeps using it.
    remember(this.#value);
    return this.#value;
  }

  equals(other: Secret): boolean {
    return this.#value === other.#value;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return REDACTED;
  }
}

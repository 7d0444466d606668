import { inspect } from 'node:util';

const REDACTED = '[REDACTED]';

/**
 * Every secret value this process has held, so that the log stream and error output can scrub it
 * even if some code path forgot to keep it wrapped. Bounded so a long-lived daemon does not grow:
 * the least recently used (wrapped or revealed) is forgotten first.
 */
const knownSecretValues = new Set<string>();
const MAX_KNOWN_SECRETS = 1000;
/** Shorter values would make scrubbing replace ordinary words. */
const MIN_SCRUB_LENGTH = 8;
/**
 * The known values by their first MIN_SCRUB_LENGTH characters. Every log line is scrubbed: with a
 * thousand known values, asking the line for each one costs more than the line is worth, while
 * looking up each position of the line in this index costs the line's length.
 */
const byPrefix = new Map<string, Set<string>>();
/** Up to this many known values, asking the line for each is the cheaper way. */
const INDEX_FROM = 32;

function remember(value: string): void {
  if (value.length < MIN_SCRUB_LENGTH) return;
  knownSecretValues.delete(value);
  knownSecretValues.add(value);
  const prefix = value.slice(0, MIN_SCRUB_LENGTH);
  byPrefix.set(prefix, (byPrefix.get(prefix) ?? new Set()).add(value));
  if (knownSecretValues.size > MAX_KNOWN_SECRETS) {
    const oldest = knownSecretValues.values().next().value;
    if (oldest !== undefined) forget(oldest);
  }
}

function forget(value: string): void {
  knownSecretValues.delete(value);
  const prefix = value.slice(0, MIN_SCRUB_LENGTH);
  const bucket = byPrefix.get(prefix);
  bucket?.delete(value);
  if (bucket?.size === 0) byPrefix.delete(prefix);
}

/** The known values that occur in `text`. */
function valuesIn(text: string): string[] {
  if (knownSecretValues.size <= INDEX_FROM) return [...knownSecretValues].filter((value) => text.includes(value));
  const found = new Set<string>();
  for (let at = 0; at + MIN_SCRUB_LENGTH <= text.length; at++) {
    const bucket = byPrefix.get(text.slice(at, at + MIN_SCRUB_LENGTH));
    if (bucket) for (const value of bucket) if (text.startsWith(value, at)) found.add(value);
  }
  return [...found];
}

/** Replaces every known secret value in `text`. The last line of defence, not the first. */
export function scrubSecrets(text: string): string {
  const found = valuesIn(text);
  if (found.length === 0) return text;
  // Longest first: a secret that contains another is replaced whole.
  let out = text;
  for (const value of found.sort((a, b) => b.length - a.length)) out = out.split(value).join(REDACTED);
  return out;
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

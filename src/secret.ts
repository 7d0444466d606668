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
 * The known values by a rolling hash of their first MIN_SCRUB_LENGTH characters. Every log line is
 * scrubbed: with a thousand known values, asking the line for each one costs more than the line is
 * worth; sliding a hash along the line costs a few integer operations per character and allocates
 * nothing, where taking each position's 8 characters as a string and looking it up cost a string
 * per character (half of a 5,000-token run's scrubbing time).
 */
const byPrefixHash = new Map<number, Set<string>>();
/** Up to this many known values, asking the line for each is the cheaper way. */
const INDEX_FROM = 32;
const HASH_BASE = 31;
/** HASH_BASE to the power MIN_SCRUB_LENGTH - 1 (mod 2^32): the weight of the character that leaves the window. */
const LEAVING_WEIGHT = Array.from({ length: MIN_SCRUB_LENGTH - 1 }).reduce<number>((weight) => Math.imul(weight, HASH_BASE), 1);

/** The hash of `text`'s MIN_SCRUB_LENGTH characters from `at` (32-bit, wrapping). */
function prefixHash(text: string, at = 0): number {
  let hash = 0;
  for (let i = at; i < at + MIN_SCRUB_LENGTH; i++) hash = (Math.imul(hash, HASH_BASE) + text.charCodeAt(i)) | 0;
  return hash;
}

/**
 * A value as it may appear in output: as itself, and as a JSON string escapes it (a quote, a
 * backslash, a control character), since log lines are scrubbed after they are serialised.
 */
function formsOf(value: string): string[] {
  const escaped = JSON.stringify(value).slice(1, -1);
  return escaped === value ? [value] : [value, escaped];
}

function remember(value: string): void {
  if (value.length < MIN_SCRUB_LENGTH) return;
  // Known already (every request's bearer is revealed): only made the newest, not indexed again.
  if (knownSecretValues.delete(value)) {
    knownSecretValues.add(value);
    return;
  }
  knownSecretValues.add(value);
  for (const form of formsOf(value)) {
    const hash = prefixHash(form);
    byPrefixHash.set(hash, (byPrefixHash.get(hash) ?? new Set()).add(form));
  }
  if (knownSecretValues.size > MAX_KNOWN_SECRETS) {
    const oldest = knownSecretValues.values().next().value;
    if (oldest !== undefined) forget(oldest);
  }
}

function forget(value: string): void {
  knownSecretValues.delete(value);
  for (const form of formsOf(value)) {
    const hash = prefixHash(form);
    const bucket = byPrefixHash.get(hash);
    bucket?.delete(form);
    if (bucket?.size === 0) byPrefixHash.delete(hash);
  }
}

/** The known values that occur in `text`. */
function valuesIn(text: string): string[] {
  if (knownSecretValues.size === 0 || text.length < MIN_SCRUB_LENGTH) return [];
  if (knownSecretValues.size <= INDEX_FROM) return [...knownSecretValues].flatMap(formsOf).filter((form) => text.includes(form));
  let found: Set<string> | undefined;
  let hash = prefixHash(text);
  for (let at = 0; ; at++) {
    const bucket = byPrefixHash.get(hash);
    if (bucket) {
      for (const value of bucket) if (text.startsWith(value, at)) (found ??= new Set()).add(value);
    }
    const next = at + MIN_SCRUB_LENGTH;
    if (next >= text.length) break;
    // Slide the window one character: take out the leaving one, shift, add the entering one.
    hash = (Math.imul(hash - Math.imul(text.charCodeAt(at), LEAVING_WEIGHT), HASH_BASE) + text.charCodeAt(next)) | 0;
  }
  return found ? [...found] : [];
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

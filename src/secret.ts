import { inspect } from 'node:util';

const REDACTED = '[REDACTED]';

/**
 * Every secret value this process has held, so that the log stream and error output can scrub it
 * even if some code path forgot to keep it wrapped. Bounded so a long-lived daemon does not grow.
 */
const knownSecretValues = new Set<string>();
const MAX_KNOWN_SECRETS = 1000;
/** Shorter values would make scrubbing replace ordinary words. */
const MIN_SCRUB_LENGTH = 8;

function remember(value: string): void {
  if (value.length < MIN_SCRUB_LENGTH) return;
  knownSecretValues.delete(value);
  knownSecretValues.add(value);
  if (knownSecretValues.size > MAX_KNOWN_SECRETS) {
    const oldest = knownSecretValues.values().next().value;
    if (oldest !== undefined) knownSecretValues.delete(oldest);
  }
}

/** Replaces every known secret value in `text`. The last line of defence, not the first. */
export function scrubSecrets(text: string): string {
  let out = text;
  for (const value of knownSecretValues) {
    if (out.includes(value)) out = out.split(value).join(REDACTED);
  }
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

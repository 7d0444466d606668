import * as z from 'zod';

const ALLOWED = 'allowed: ';

/** A mapping that rejects unknown keys and says which keys it allows: typos must not pass silently. */
export function strictObject<T extends z.ZodRawShape>(shape: T) {
  const allowed = `${ALLOWED}${Object.keys(shape).join(', ')}`;
  return z.strictObject(shape, {
    error: (issue) => (issue.code === 'unrecognized_keys' ? allowed : undefined),
  });
}

/**
 * The keys a `strictObject` allows, read back from its unknown-key message (zod's issue carries the
 * message, not the schema): for a "did you mean". None for a message of another mapping.
 */
export function allowedKeysOf(message: string): string[] {
  return message.startsWith(ALLOWED) ? message.slice(ALLOWED.length).split(', ') : [];
}

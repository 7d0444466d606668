import { z } from 'zod';

/** A mapping that rejects unknown keys and says which keys it allows: typos must not pass silently. */
export function strictObject<T extends z.ZodRawShape>(shape: T) {
  const allowed = `allowed: ${Object.keys(shape).join(', ')}`;
  return z.strictObject(shape, {
    error: (issue) => (issue.code === 'unrecognized_keys' ? allowed : undefined),
  });
}

import * as z from 'zod';

import { DURATION_HELP, parseDuration } from './duration.js';

/** A duration string in a YAML document, turned into milliseconds, with the problem named when it is not one. */
export const durationSchema = z.string({ error: `must be ${DURATION_HELP}` }).transform((text, ctx) => {
  const parsed = parseDuration(text);
  if (!parsed.ok) {
    ctx.issues.push({ code: 'custom', message: parsed.message, input: text });
    return z.NEVER;
  }
  return parsed.ms;
});

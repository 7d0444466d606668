import * as z from 'zod';

const UNIT_MS: Record<string, number> = { w: 604_800_000, d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
const PART = /(\d+)(ms|w|d|h|m|s)/g;
const WHOLE = /^(?:\d+(?:ms|w|d|h|m|s))+$/;

/**
 * A seed's relative time (`expiresIn: 2d`, `latency: 150ms`): numbers with units, summed (`1h30m`).
 * The emulator's own reader, deliberately smaller than the product's policy durations: a double that
 * shared the product's parser would repeat its mistakes instead of catching them.
 */
export const durationSchema = z.string().transform((text, ctx) => {
  const compact = text.trim();
  if (!WHOLE.test(compact)) {
    ctx.issues.push({ code: 'custom', message: `'${text}' is not a duration such as 90s, 15m, 1h30m, 2d or 2w`, input: text });
    return z.NEVER;
  }
  let ms = 0;
  for (const [, count, unit] of compact.matchAll(PART)) ms += Number(count) * UNIT_MS[unit!]!;
  return ms;
});

import * as z from 'zod';

/**
 * A seed's relative time (`expiresIn: 2d`, `latency: 150ms`): `90s`, `15m`, `1h30m`, `7d`, `2w`, or
 * ISO 8601 (`P7D`, `PT1H30M`, `P1W`). It reads exactly what `token-rotator emulator` read before the
 * emulator became a package of its own, with the same messages, so that every seed file written for
 * it still starts. It is the emulator's own copy rather than an import of the product: the package
 * must not depend on the program it is a double for.
 */
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;

const COMPACT = /^(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+)s)?(?:(\d+)ms)?$/;
const ISO = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

/**
 * 100 years. A seed duration is added to the emulator's start (a token's expiry), and a Date ends
 * in year 275760: an unbounded one would pass here and then stop the emulator with "Invalid time
 * value". It is also far below 2^53, so a number too big to be read exactly is refused, not rounded.
 */
const MAX_DURATION_MS = 36500 * DAY;

const HELP = 'a duration such as 90s, 15m, 1h30m, 7d, 2w or ISO 8601 P7D';

type Parsed = { ok: true; ms: number } | { ok: false; message: string };

function parseDuration(input: string): Parsed {
  const result = parseUnbounded(input);
  if (result.ok && result.ms > MAX_DURATION_MS) {
    return { ok: false, message: `'${input}' is too long: a duration may be at most ${MAX_DURATION_MS / DAY}d (about 100 years)` };
  }
  return result;
}

function parseUnbounded(input: string): Parsed {
  const text = input.trim();
  if (text === '') return { ok: false, message: `empty; expected ${HELP}` };

  const compact = COMPACT.exec(text);
  if (compact && compact.slice(1).some((part) => part !== undefined)) {
    const [w, d, h, m, s, ms] = compact.slice(1).map((part) => Number(part ?? 0));
    return { ok: true, ms: w! * WEEK + d! * DAY + h! * HOUR + m! * MINUTE + s! * SECOND + ms! };
  }

  const upper = text.toUpperCase();
  // Months and years: no fixed length, so a seed's expiry would depend on the day it starts.
  if (upper.startsWith('P') && /[YM]/.test(upper.split('T')[0] ?? '')) {
    return { ok: false, message: `'${input}': months and years have no fixed length; use days or weeks (P30D)` };
  }
  const iso = ISO.exec(upper);
  if (iso && iso.slice(1).some((part) => part !== undefined)) {
    const [w, d, h, m] = iso.slice(1, 5).map((part) => Number(part ?? 0));
    const s = Number(iso[5] ?? 0);
    return { ok: true, ms: w! * WEEK + d! * DAY + h! * HOUR + m! * MINUTE + Math.round(s * SECOND) };
  }
  return { ok: false, message: `'${input}' is not ${HELP}` };
}

/** A duration in a seed, in milliseconds, with the problem named when it is not one. */
export const durationSchema = z.string({ error: `must be ${HELP}` }).transform((text, ctx) => {
  const parsed = parseDuration(text);
  if (!parsed.ok) {
    ctx.issues.push({ code: 'custom', message: parsed.message, input: text });
    return z.NEVER;
  }
  return parsed.ms;
});

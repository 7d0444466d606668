/**
 * Durations as people write them in a policy: `90s`, `15m`, `1h30m`, `7d`, `2w`, or ISO 8601
 * (`P7D`, `PT1H30M`, `P1W`). Months and years are refused: they have no fixed length, and a rotation
 * schedule that drifts by days is worse than one that makes the author count days.
 */
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;

const UNIT_MS: Record<string, number> = { w: WEEK, d: DAY, h: HOUR, m: MINUTE, s: SECOND, ms: 1 };

const COMPACT = /^(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+)s)?(?:(\d+)ms)?$/;
const ISO = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

/**
 * 100 years. A duration is added to "now" (a new token's expiry, an overlap's end, a maxAge deadline),
 * and a Date ends in year 275760: an unbounded one parses and then fails every run with "Invalid
 * time value". 100 years keeps any sum of a few of them far inside that range and inside what the
 * service accepts. It is also far below 2^53: a number too big to be read exactly is above it, so it
 * is refused rather than silently rounded.
 */
export const MAX_DURATION_MS = 36500 * DAY;

export type DurationResult = { ok: true; ms: number } | { ok: false; message: string };

export const DURATION_HELP = 'a duration such as 90s, 15m, 1h30m, 7d, 2w or ISO 8601 P7D';

export function parseDuration(input: string): DurationResult {
  const result = parseUnbounded(input);
  if (result.ok && result.ms > MAX_DURATION_MS) {
    return { ok: false, message: `'${input}' is too long: a duration may be at most ${MAX_DURATION_MS / DAY}d (about 100 years)` };
  }
  return result;
}

function parseUnbounded(input: string): DurationResult {
  const text = input.trim();
  if (text === '') return { ok: false, message: `empty; expected ${DURATION_HELP}` };

  const compact = COMPACT.exec(text);
  if (compact && compact.slice(1).some((part) => part !== undefined)) {
    const [w, d, h, m, s, ms] = compact.slice(1).map((part) => Number(part ?? 0));
    return { ok: true, ms: w! * WEEK + d! * DAY + h! * HOUR + m! * MINUTE + s! * SECOND + ms! };
  }

  const upper = text.toUpperCase();
  if (/^P.*[YM].*$/.test(upper.split('T')[0] ?? '') && upper.startsWith('P')) {
    return { ok: false, message: `'${input}': months and years have no fixed length; use days or weeks (P30D)` };
  }
  const iso = ISO.exec(upper);
  if (iso && iso.slice(1).some((part) => part !== undefined)) {
    const [w, d, h, m] = iso.slice(1, 5).map((part) => Number(part ?? 0));
    const s = Number(iso[5] ?? 0);
    return { ok: true, ms: w! * WEEK + d! * DAY + h! * HOUR + m! * MINUTE + Math.round(s * SECOND) };
  }
  return { ok: false, message: `'${input}' is not ${DURATION_HELP}` };
}

/** `3d 4h`, `15m`, `0s`: the two largest units, for reasons and tables. */
export function formatDuration(ms: number): string {
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(ms);
  const parts: string[] = [];
  for (const [unit, size] of Object.entries(UNIT_MS)) {
    if (unit === 'w' || unit === 'ms') continue;
    const count = Math.floor(rest / size);
    if (count > 0) {
      parts.push(`${count}${unit}`);
      rest -= count * size;
    }
    if (parts.length === 2) break;
  }
  if (parts.length === 0) return rest > 0 ? `${sign}${rest}ms` : '0s';
  return sign + parts.join(' ');
}

/*
 * The two time types of the API: metav1.Time (RFC 3339, whole seconds, UTC) for timestamps such
 * as creationTimestamp, and metav1.MicroTime (RFC 3339 with exactly six fractional digits) for a
 * Lease's acquireTime and renewTime.
 */

const MICRO_LAYOUT = '2006-01-02T15:04:05.000000Z07:00';

/** metav1.Time's form of a date. */
export function formatTime(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** metav1.MicroTime's form of a date (the double's clock has millisecond precision). */
export function formatMicroTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/**
 * Reads a MicroTime as Go's time.Parse(RFC3339Micro) does, answering it re-written in UTC as the
 * server stores it, or the parse error's text. The six digits are required: Go's layout with
 * `.000000` takes exactly that many.
 */
export function parseMicroTime(value: string): { ok: string } | { error: string } {
  const fail = (rest: string, element: string) => ({
    error: `parsing time ${JSON.stringify(value)} as ${JSON.stringify(MICRO_LAYOUT)}: cannot parse ${JSON.stringify(rest)} as ${JSON.stringify(element)}`,
  });
  const head = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})/.exec(value);
  if (!head) return fail(value, '2006');
  const rest = value.slice(head[0].length);
  const fraction = /^\.(\d{6})/.exec(rest);
  if (!fraction) return fail(rest, '.000000');
  const zone = rest.slice(7);
  const offset = /^(?:Z|([+-])(\d{2}):(\d{2}))$/.exec(zone);
  if (!offset) return fail(zone, 'Z07:00');
  const [, y, mo, d, h, mi, s] = head.map(Number) as [number, number, number, number, number, number, number];
  const sign = offset[1] === '-' ? -1 : 1;
  const offsetMinutes = offset[1] ? sign * (Number(offset[2]) * 60 + Number(offset[3])) : 0;
  const ms = Date.UTC(y, mo - 1, d, h, mi, s) - offsetMinutes * 60_000;
  const check = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  if (check.getUTCDate() !== d || check.getUTCMonth() !== mo - 1 || h > 23 || mi > 59 || s > 59) {
    return { error: `parsing time ${JSON.stringify(value)}: day or hour out of range` };
  }
  return { ok: `${new Date(ms).toISOString().slice(0, 19)}.${fraction[1]}Z` };
}

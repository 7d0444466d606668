/**
 * A secret kept as one field of a JSON object (`{"token": "…", "user": "ingest"}`), the shape
 * applications and External Secrets Operator read with a `property`. The other fields are kept
 * exactly: numbers are carried as the text they were written in (`JSON.rawJSON`), so that a large
 * integer or `1.0` comes back unchanged rather than rounded by a double.
 */

type Reviver = (key: string, value: unknown, context?: { source?: string }) => unknown;

const rawJson = (JSON as unknown as { rawJSON?: (text: string) => unknown }).rawJSON;

/** Reads numbers as their source text, where this Node.js can (22 and later): none is reformatted. */
const keepNumbers: Reviver = (_key, value, context) =>
  typeof value === 'number' && rawJson && context?.source !== undefined ? rawJson(context.source) : value;

export type JsonObjectReading =
  | { kind: 'object'; fields: Record<string, unknown> }
  /** Text that is not a JSON object (a plain string, an array, invalid JSON): not one of ours to merge into. */
  | { kind: 'other' };

export function readJsonObject(text: string): JsonObjectReading {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text, keepNumbers as Parameters<typeof JSON.parse>[1]);
  } catch {
    return { kind: 'other' };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return { kind: 'other' };
  return { kind: 'object', fields: parsed as Record<string, unknown> };
}

/** The field's value when it is a non-empty string; undefined otherwise. */
export function stringField(fields: Record<string, unknown>, key: string): string | undefined {
  const value = Object.hasOwn(fields, key) ? fields[key] : undefined;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The object with `key` set to `value`, in place when it was there (field order kept), else last. */
export function withField(fields: Record<string, unknown>, key: string, value: string): string {
  return JSON.stringify({ ...fields, [key]: value });
}

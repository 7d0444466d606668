/** Objects as they travel on the wire: the double keeps everything in this form, as unstructured clients do. */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function cloneJson<T extends JsonValue>(value: T): T {
  return structuredClone(value);
}

/** Deep equality of JSON values; key order does not matter, list order does. */
export function jsonEqual(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a === null || b === null) return false;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  if (isJsonObject(a)) {
    if (!isJsonObject(b)) return false;
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((key) => key in b && jsonEqual(a[key], b[key]));
  }
  return false;
}

/** The object at `key`, created when absent (or not an object). */
export function childObject(parent: JsonObject, key: string): JsonObject {
  const existing = parent[key];
  if (isJsonObject(existing)) return existing;
  const created: JsonObject = {};
  parent[key] = created;
  return created;
}

/** `metadata` of an object, or an empty one (not attached). */
export function metadataOf(object: JsonObject): JsonObject {
  const metadata = object.metadata;
  return isJsonObject(metadata) ? metadata : {};
}

export function stringAt(object: JsonObject | undefined, key: string): string | undefined {
  const value = object?.[key];
  return typeof value === 'string' ? value : undefined;
}

/** A map of strings such as labels or annotations; other values are dropped. */
export function stringMapAt(object: JsonObject | undefined, key: string): Record<string, string> {
  const value = object?.[key];
  const out: Record<string, string> = {};
  if (isJsonObject(value)) for (const [k, v] of Object.entries(value)) if (typeof v === 'string') out[k] = v;
  return out;
}

import { isJsonObject, type JsonObject, type JsonValue } from './json.js';
import { childSchema, elementSchema, type Schema } from './schema.js';

/**
 * What an object looks like after a round trip through its Go type, as every stored object has
 * made: nulls are gone, empty maps and lists are gone (omitempty), and the struct fields Go always
 * writes (`alwaysPresent`, such as a Deployment's `status`) are there, `{}` when empty. Empty
 * structs that were sent stay (pointers to empty structs are written as `{}`). Keys come in Go's
 * order, so the JSON reads like the real server's.
 */
export function toTypedForm(object: JsonObject, schema: Schema, alwaysPresent: readonly string[]): JsonObject {
  const out = (clean(object, schema) ?? {}) as JsonObject;
  for (const field of alwaysPresent) if (!isJsonObject(out[field])) out[field] = {};
  return out;
}

function clean(value: JsonValue, schema: Schema): JsonValue | undefined {
  if (value === null) return undefined;
  if (Array.isArray(value)) {
    const items = value.map((item) => clean(item, elementSchema(schema, item))).filter((item): item is JsonValue => item !== undefined);
    return items.length > 0 ? items : undefined;
  }
  if (isJsonObject(value)) {
    const out: JsonObject = {};
    for (const key of goKeyOrder(value, schema)) {
      const inner = value[key]!;
      const cleaned = clean(inner, childSchema(schema, key, inner));
      if (cleaned !== undefined) out[key] = cleaned;
    }
    if (schema.type === 'map' && Object.keys(out).length === 0) return undefined;
    return out;
  }
  return value;
}

/** encoding/json's order: a struct's fields as declared (where the schema lists them), a map's keys sorted. */
function goKeyOrder(value: JsonObject, schema: Schema): string[] {
  const keys = Object.keys(value);
  if (schema.type === 'map') return keys.sort();
  if (schema.type !== 'struct') return keys;
  const declared = Object.keys(schema.fields);
  return [...declared.filter((k) => k in value), ...keys.filter((k) => !declared.includes(k))];
}

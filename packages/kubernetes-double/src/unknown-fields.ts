import { isJsonObject, type JsonValue } from './json.js';
import { childSchema, elementSchema, type Schema } from './schema.js';

/**
 * The fields of `value` its kind does not declare, as `spec.template.foo` / `a.b[0].c`. Only
 * structs the schema lists completely are checked (an `open` struct takes anything), so this finds
 * misspelt top-level, metadata, Secret and Lease fields and a workload's spec fields, not deeper.
 */
export function unknownFields(value: JsonValue, schema: Schema, path = ''): string[] {
  const found: string[] = [];
  if (Array.isArray(value)) {
    value.forEach((item, i) => found.push(...unknownFields(item, elementSchema(schema, item), `${path}[${i}]`)));
  } else if (isJsonObject(value) && (schema.type === 'struct' || schema.type === 'map')) {
    for (const [key, inner] of Object.entries(value)) {
      const at = path ? `${path}.${key}` : key;
      if (schema.type === 'struct' && !schema.open && !(key in schema.fields)) {
        found.push(at);
        continue;
      }
      found.push(...unknownFields(inner, childSchema(schema, key, inner), at));
    }
  }
  return found;
}

/** Drops the fields `unknownFields` finds, as decoding into the Go type does. */
export function dropUnknownFields(value: JsonValue, schema: Schema): void {
  if (Array.isArray(value)) {
    for (const item of value) dropUnknownFields(item, elementSchema(schema, item));
  } else if (isJsonObject(value) && (schema.type === 'struct' || schema.type === 'map')) {
    for (const [key, inner] of Object.entries(value)) {
      if (schema.type === 'struct' && !schema.open && !(key in schema.fields)) delete value[key];
      else dropUnknownFields(inner, childSchema(schema, key, inner));
    }
  }
}

import { cloneJson, isJsonObject, jsonEqual, type JsonObject, type JsonValue } from '../json.js';
import { childSchema, elementSchema, type Schema } from '../schema.js';

/** A patch the strategic merge cannot apply (a bad directive): the server answers 400 or 422. */
export class StrategicPatchError extends Error {}

const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList/';
const SET_ELEMENT_ORDER = '$setElementOrder/';

/**
 * A strategic merge patch, driven by the kind's list types (the `patchStrategy`/`patchMergeKey`
 * tags mostly agree with them: keyed lists merge by their first key, sets merge as sets, other
 * lists are replaced). Supported directives: null deletes a field, `$patch: replace|delete|merge`,
 * `$deleteFromPrimitiveList/<field>`, `$retainKeys`. `$setElementOrder/<field>` is accepted and
 * only ordering is not applied: existing items keep their places, new ones are appended.
 */
export function applyStrategicMergePatch(original: JsonObject, patch: JsonObject, schema: Schema): JsonObject {
  const merged = mergeMap(original, patch, schema);
  return merged ?? {};
}

function mergeMap(original: JsonObject | undefined, patch: JsonObject, schema: Schema): JsonObject | undefined {
  const directive = patch.$patch;
  if (directive === 'delete') return undefined;
  if (directive === 'replace') return stripDirectives(patch) as JsonObject;
  if (directive !== undefined && directive !== 'merge')
    throw new StrategicPatchError(`Unknown patch type: ${String(directive)} in map: ${JSON.stringify(patch)}`);
  const out: JsonObject = original ? cloneJson(original) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (key === '$patch' || key === '$retainKeys' || key.startsWith(SET_ELEMENT_ORDER)) continue;
    if (key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
      const field = key.slice(DELETE_FROM_PRIMITIVE_LIST.length);
      const existing = out[field];
      if (Array.isArray(existing) && Array.isArray(value)) out[field] = existing.filter((item) => !value.some((v) => jsonEqual(v, item)));
      continue;
    }
    if (value === null) {
      delete out[key];
      continue;
    }
    const fieldSchema = childSchema(schema, key, value);
    const current = out[key];
    if (isJsonObject(value) && fieldSchema.type !== 'scalar' && !(fieldSchema.type === 'struct' && fieldSchema.atomic)) {
      const merged = mergeMap(isJsonObject(current) ? current : undefined, value, fieldSchema);
      if (merged === undefined) delete out[key];
      else out[key] = merged;
    } else if (Array.isArray(value)) {
      out[key] = mergeList(Array.isArray(current) ? current : [], value, fieldSchema);
    } else {
      out[key] = cloneJson(value);
    }
  }
  const retain = patch.$retainKeys;
  if (Array.isArray(retain)) for (const key of Object.keys(out)) if (!retain.includes(key)) delete out[key];
  return out;
}

function mergeList(original: JsonValue[], patch: JsonValue[], schema: Schema): JsonValue[] {
  if (patch.some((item) => isJsonObject(item) && item.$patch === 'replace')) {
    return patch.filter((item) => !(isJsonObject(item) && item.$patch === 'replace')).map((item) => stripDirectives(item));
  }
  if (schema.type === 'list' && schema.list === 'set') {
    const out = [...original];
    for (const item of patch) if (!out.some((existing) => jsonEqual(existing, item))) out.push(cloneJson(item));
    return out;
  }
  if (schema.type !== 'list' || schema.list !== 'map') return patch.map((item) => stripDirectives(item));
  const mergeKey = schema.keys[0]!;
  const out = original.map((item) => cloneJson(item));
  for (const item of patch) {
    if (!isJsonObject(item)) throw new StrategicPatchError(`map: ${JSON.stringify(item)} does not contain declared merge key: ${mergeKey}`);
    if (!(mergeKey in item)) throw new StrategicPatchError(`map: ${JSON.stringify(item)} does not contain declared merge key: ${mergeKey}`);
    const at = out.findIndex((existing) => isJsonObject(existing) && jsonEqual(existing[mergeKey], item[mergeKey]));
    if (item.$patch === 'delete') {
      if (at >= 0) out.splice(at, 1);
      continue;
    }
    const merged = mergeMap(at >= 0 && isJsonObject(out[at]) ? (out[at] as JsonObject) : undefined, item, elementSchema(schema, item));
    if (merged === undefined) {
      if (at >= 0) out.splice(at, 1);
    } else if (at >= 0) out[at] = merged;
    else out.push(merged);
  }
  return out;
}

function stripDirectives(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map((item) => stripDirectives(item));
  if (!isJsonObject(value)) return value;
  const out: JsonObject = {};
  for (const [key, inner] of Object.entries(value)) {
    if (key === '$patch' || key === '$retainKeys' || key.startsWith(SET_ELEMENT_ORDER) || key.startsWith(DELETE_FROM_PRIMITIVE_LIST))
      continue;
    out[key] = stripDirectives(inner);
  }
  return out;
}

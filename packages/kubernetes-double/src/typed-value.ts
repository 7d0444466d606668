import type { FieldPath, PathElement } from './field-path.js';
import { serializeElement } from './field-path.js';
import { FieldSet } from './field-set.js';
import { isJsonObject, jsonEqual, type JsonObject, type JsonValue } from './json.js';
import { childSchema, elementSchema, type Schema, shapeMatches } from './schema.js';

/*
 * The four walks of structured-merge-diff's typed package (ToFieldSet, Compare, Merge, RemoveItems)
 * over plain JSON, guided by the schema. `undefined` is an absent value; `null` a present null.
 */

const isGranularObject = (schema: Schema, value: JsonValue | undefined) =>
  (schema.type === 'struct' || schema.type === 'map') && !schema.atomic && shapeMatches(schema, value);
const isGranularList = (schema: Schema, value: JsonValue | undefined) =>
  schema.type === 'list' && schema.list !== 'atomic' && shapeMatches(schema, value);

/** The path element of a list item: its key fields (defaulted where the schema says so) or its value. */
export function listItemElement(schema: Schema, item: JsonValue, index: number): PathElement {
  if (schema.type === 'list' && schema.list === 'map') {
    const fields = isJsonObject(item) ? item : {};
    const key: Array<[string, JsonValue]> = [];
    for (const name of [...schema.keys].sort()) {
      const value = fields[name] ?? schema.keyDefaults?.[name];
      if (value !== undefined) key.push([name, value]);
    }
    return { key };
  }
  if (schema.type === 'list' && schema.list === 'set') return { value: item };
  return { index };
}

/** Every path set in `value`: leaves, list items, and struct fields holding null or `{}`. */
export function toFieldSet(value: JsonValue, schema: Schema): FieldSet {
  const set = new FieldSet();
  const walk = (v: JsonValue, s: Schema, path: PathElement[]) => {
    if (isGranularObject(s, v) && isJsonObject(v)) {
      for (const [key, child] of Object.entries(v)) {
        const childPath = [...path, { field: key }];
        const cs = childSchema(s, key, child);
        walk(child, cs, childPath);
        const emptyObject = isJsonObject(child) && Object.keys(child).length === 0;
        if (child === null || emptyObject || s.type === 'map') set.insert(childPath);
      }
    } else if (isGranularList(s, v) && Array.isArray(v)) {
      v.forEach((item, i) => {
        const itemPath = [...path, listItemElement(s, item, i)];
        walk(item, elementSchema(s, item), itemPath);
        set.insert(itemPath);
      });
    } else if (v !== null || s.type === 'scalar') {
      set.insert(path);
    }
  };
  walk(value, schema, []);
  return set;
}

export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

/** What changed from `lhs` to `rhs`: leaves that differ, and every path that appeared or went. */
export function compare(lhs: JsonValue | undefined, rhs: JsonValue | undefined, schema: Schema): Comparison {
  const result: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  const walk = (l: JsonValue | undefined, r: JsonValue | undefined, s: Schema, path: FieldPath) => {
    const bothEmpty = isEmptyContainer(l) && isEmptyContainer(r);
    if (!bothEmpty && isGranularObject(s, l) && isGranularObject(s, r) && (isJsonObject(l) || isJsonObject(r))) {
      const lo = isJsonObject(l) ? l : {};
      const ro = isJsonObject(r) ? r : {};
      for (const key of new Set([...Object.keys(lo), ...Object.keys(ro)])) {
        walk(lo[key], ro[key], childSchema(s, key, ro[key] ?? lo[key]), [...path, { field: key }]);
      }
    } else if (!bothEmpty && isGranularList(s, l) && isGranularList(s, r) && (Array.isArray(l) || Array.isArray(r))) {
      const li = indexItems(s, Array.isArray(l) ? l : []);
      const ri = indexItems(s, Array.isArray(r) ? r : []);
      for (const [k, pe] of new Map([...li.elements, ...ri.elements])) {
        const lv = li.values.get(k);
        const rv = ri.values.get(k);
        walk(lv, rv, elementSchema(s, rv ?? lv), [...path, pe]);
      }
    } else {
      if (l === undefined) result.added.insert(path);
      else if (r === undefined) result.removed.insert(path);
      else if (!jsonEqual(l, r)) result.modified.insert(path);
      return;
    }
    if (l === undefined) result.added.insert(path);
    else if (r === undefined) result.removed.insert(path);
  };
  walk(lhs, rhs, schema, []);
  return result;
}

/**
 * `rhs` merged into `lhs`: rhs wins at leaves and atomic values, structs and maps merge key by key,
 * keyed lists item by item in structured-merge-diff's order (rhs's order for the items both have,
 * lhs-only items kept where they were).
 */
export function merge(lhs: JsonValue | undefined, rhs: JsonValue | undefined, schema: Schema): JsonValue | undefined {
  const bothEmpty = isEmptyContainer(lhs) && isEmptyContainer(rhs);
  if (!bothEmpty && isGranularObject(schema, lhs) && isGranularObject(schema, rhs) && (isJsonObject(lhs) || isJsonObject(rhs))) {
    const lo = isJsonObject(lhs) ? lhs : {};
    const ro = isJsonObject(rhs) ? rhs : {};
    const out: JsonObject = {};
    for (const key of new Set([...Object.keys(lo), ...Object.keys(ro)])) {
      const merged = merge(lo[key], ro[key], childSchema(schema, key, ro[key] ?? lo[key]));
      if (merged !== undefined) out[key] = merged;
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }
  if (!bothEmpty && isGranularList(schema, lhs) && isGranularList(schema, rhs) && (Array.isArray(lhs) || Array.isArray(rhs))) {
    return mergeLists(Array.isArray(lhs) ? lhs : [], Array.isArray(rhs) ? rhs : [], schema);
  }
  return rhs !== undefined ? rhs : lhs;
}

function mergeLists(lhs: JsonValue[], rhs: JsonValue[], schema: Schema): JsonValue[] | undefined {
  const l = indexItems(schema, lhs);
  const r = indexItems(schema, rhs);
  const out: JsonValue[] = [];
  const push = (k: string) => {
    const merged = merge(l.values.get(k), r.values.get(k), elementSchema(schema, r.values.get(k) ?? l.values.get(k)));
    if (merged !== undefined) out.push(merged);
  };
  const shared = r.order.filter((k) => l.values.has(k));
  let nextShared = shared.shift();
  const mergedRhs = new Set<string>();
  let li = 0;
  let ri = 0;
  while (li < l.order.length || ri < r.order.length) {
    if (li < l.order.length && ri < r.order.length) {
      const k = l.order[li]!;
      if (k === r.order[ri]) {
        mergedRhs.add(k);
        push(k);
        li++;
        ri++;
        nextShared = shared.shift();
        continue;
      }
      if (r.values.has(k) && nextShared !== undefined && nextShared !== k) {
        li++;
        continue;
      }
    }
    if (li < l.order.length) {
      const k = l.order[li]!;
      if (!r.values.has(k)) {
        push(k);
        li++;
        continue;
      } else if (mergedRhs.has(k)) {
        li++;
      }
    }
    if (ri < r.order.length) {
      const k = r.order[ri]!;
      mergedRhs.add(k);
      push(k);
      ri++;
      if (nextShared === k) nextShared = shared.shift();
    }
  }
  return out.length > 0 ? out : undefined;
}

/**
 * `value` without the items in `set` (struct fields, map entries, list items), as RemoveItems
 * does: a struct, map or list left with nothing becomes null.
 */
export function removeItems(value: JsonValue, set: FieldSet, schema: Schema): JsonValue {
  if (isGranularObject(schema, value) && isJsonObject(value)) {
    const out: JsonObject = {};
    for (const [key, child] of Object.entries(value)) {
      const pe = { field: key };
      if (set.hasMember(pe)) continue;
      const sub = set.withPrefix(pe);
      out[key] = sub.isEmpty() ? child : removeItems(child, sub, childSchema(schema, key, child));
    }
    return Object.keys(out).length > 0 ? out : null;
  }
  if (isGranularList(schema, value) && Array.isArray(value)) {
    const out: JsonValue[] = [];
    value.forEach((item, i) => {
      const pe = listItemElement(schema, item, i);
      if (set.hasMember(pe)) return;
      const sub = set.withPrefix(pe);
      out.push(sub.isEmpty() ? item : removeItems(item, sub, elementSchema(schema, item)));
    });
    return out.length > 0 ? out : null;
  }
  return value;
}

function isEmptyContainer(value: JsonValue | undefined): boolean {
  if (value === undefined || value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  return isJsonObject(value) && Object.keys(value).length === 0;
}

/** A list's items by their path element; a repeated element keeps its first item. */
function indexItems(schema: Schema, items: JsonValue[]) {
  const values = new Map<string, JsonValue>();
  const elements = new Map<string, PathElement>();
  const order: string[] = [];
  items.forEach((item, i) => {
    const pe = listItemElement(schema, item, i);
    const k = serializeElement(pe);
    if (values.has(k)) return;
    values.set(k, item);
    elements.set(k, pe);
    order.push(k);
  });
  return { values, elements, order };
}

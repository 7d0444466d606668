import { cloneJson, isJsonObject, jsonEqual, type JsonValue } from '../json.js';

/** A patch document that is not a list of operations: the server answers 400. */
export class MalformedPatchError extends Error {}
/** An operation that cannot be applied (missing path, failed test): the server answers 422. */
export class PatchApplyError extends Error {}

interface Operation {
  op: string;
  path: string;
  from?: string;
  value?: JsonValue;
  hasValue: boolean;
}

/** The API server refuses JSON patches longer than this. */
export const MAX_JSON_PATCH_OPERATIONS = 10000;

export function parseJsonPatch(document: JsonValue): Operation[] {
  if (!Array.isArray(document)) throw new MalformedPatchError('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  return document.map((raw) => {
    if (!isJsonObject(raw)) throw new MalformedPatchError('json: cannot unmarshal into Go value of type jsonpatch.Operation');
    return {
      op: typeof raw.op === 'string' ? raw.op : '',
      path: typeof raw.path === 'string' ? raw.path : '',
      ...(typeof raw.from === 'string' ? { from: raw.from } : {}),
      ...('value' in raw ? { value: raw.value } : {}),
      hasValue: 'value' in raw,
    };
  });
}

/** RFC 6902 applied to a copy of `target`. */
export function applyJsonPatch(target: JsonValue, operations: Operation[]): JsonValue {
  let doc = cloneJson(target);
  for (const operation of operations) {
    switch (operation.op) {
      case 'add':
        doc = add(doc, operation.path, requireValue(operation));
        break;
      case 'remove':
        doc = remove(doc, operation.path).doc;
        break;
      case 'replace': {
        get(doc, operation.path);
        doc = add(remove(doc, operation.path).doc, operation.path, requireValue(operation));
        break;
      }
      case 'move': {
        const from = requireFrom(operation);
        const removed = remove(doc, from);
        doc = add(removed.doc, operation.path, removed.value);
        break;
      }
      case 'copy':
        doc = add(doc, operation.path, cloneJson(get(doc, requireFrom(operation))));
        break;
      case 'test':
        if (!jsonEqual(get(doc, operation.path), requireValue(operation)))
          throw new PatchApplyError(`testing value ${operation.path} failed: test failed`);
        break;
      default:
        throw new PatchApplyError(`Unexpected kind: ${operation.op}`);
    }
  }
  return doc;
}

function requireValue(operation: Operation): JsonValue {
  if (!operation.hasValue) throw new PatchApplyError(`${operation.op} operation missing value`);
  return cloneJson(operation.value ?? null);
}

function requireFrom(operation: Operation): string {
  if (operation.from === undefined) throw new PatchApplyError(`${operation.op} operation missing from`);
  return operation.from;
}

function tokens(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new PatchApplyError(`invalid JSON pointer: ${JSON.stringify(pointer)}`);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function arrayIndex(token: string, length: number, allowEnd: boolean): number {
  if (allowEnd && token === '-') return length;
  if (!/^(0|[1-9]\d*)$/.test(token)) throw new PatchApplyError(`invalid array index: ${token}`);
  const index = Number(token);
  if (index > length || (!allowEnd && index === length)) throw new PatchApplyError(`array index out of bounds: ${token}`);
  return index;
}

function get(doc: JsonValue, pointer: string): JsonValue {
  let node: JsonValue = doc;
  for (const token of tokens(pointer)) {
    if (Array.isArray(node)) node = node[arrayIndex(token, node.length, false)]!;
    else if (isJsonObject(node) && Object.hasOwn(node, token)) node = node[token]!;
    else throw new PatchApplyError(`doc is missing path: ${JSON.stringify(pointer)}: missing value`);
  }
  return node;
}

function parentOf(doc: JsonValue, pointer: string): { parent: JsonValue; last: string } {
  const all = tokens(pointer);
  if (all.length === 0) return { parent: null, last: '' };
  const last = all.pop()!;
  const parentPointer = all.map((t) => `/${t.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
  let parent: JsonValue;
  try {
    parent = get(doc, parentPointer);
  } catch {
    throw new PatchApplyError(`doc is missing path: ${JSON.stringify(pointer)}: missing value`);
  }
  return { parent, last };
}

function add(doc: JsonValue, pointer: string, value: JsonValue): JsonValue {
  if (pointer === '') return value;
  const { parent, last } = parentOf(doc, pointer);
  if (Array.isArray(parent)) parent.splice(arrayIndex(last, parent.length, true), 0, value);
  else if (isJsonObject(parent)) parent[last] = value;
  else throw new PatchApplyError(`doc is missing path: ${JSON.stringify(pointer)}: missing value`);
  return doc;
}

function remove(doc: JsonValue, pointer: string): { doc: JsonValue; value: JsonValue } {
  if (pointer === '') return { doc: null, value: doc };
  const { parent, last } = parentOf(doc, pointer);
  if (Array.isArray(parent)) {
    const [value] = parent.splice(arrayIndex(last, parent.length, false), 1);
    return { doc, value: value! };
  }
  if (isJsonObject(parent) && Object.hasOwn(parent, last)) {
    const value = parent[last]!;
    delete parent[last];
    return { doc, value };
  }
  throw new PatchApplyError(`Unable to remove nonexistent key: ${last}: missing value`);
}

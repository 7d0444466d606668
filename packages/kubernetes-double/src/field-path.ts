import type { JsonValue } from './json.js';

/**
 * One step of a field path, as structured-merge-diff has them: a struct field or map key (`f:`),
 * an item of a keyed list (`k:`, its key fields sorted by name), an item of a set (`v:`) or of an
 * atomic list (`i:`).
 */
export type PathElement =
  { field: string } | { key: ReadonlyArray<readonly [string, JsonValue]> } | { value: JsonValue } | { index: number };

export type FieldPath = readonly PathElement[];

/** The FieldsV1 spelling, also used as the element's identity. */
export function serializeElement(pe: PathElement): string {
  if ('field' in pe) return `f:${pe.field}`;
  if ('key' in pe) return `k:${JSON.stringify(Object.fromEntries(pe.key))}`;
  if ('value' in pe) return `v:${JSON.stringify(pe.value)}`;
  return `i:${pe.index}`;
}

export function parseElement(text: string): PathElement | undefined {
  const colon = text.indexOf(':');
  if (colon < 0) return undefined;
  const body = text.slice(colon + 1);
  switch (text.slice(0, colon)) {
    case 'f':
      return { field: body };
    case 'k': {
      const fields = JSON.parse(body) as Record<string, JsonValue>;
      return { key: Object.entries(fields).sort(([a], [b]) => compareStrings(a, b)) };
    }
    case 'v':
      return { value: JSON.parse(body) as JsonValue };
    case 'i':
      return { index: Number(body) };
    default:
      // Unknown element types are dropped, as structured-merge-diff does.
      return undefined;
  }
}

const RANK = (pe: PathElement) => ('field' in pe ? 0 : 'key' in pe ? 1 : 'value' in pe ? 2 : 3);

/** structured-merge-diff's order: fields, then keys, then values, then indexes; each by its content. */
export function compareElements(a: PathElement, b: PathElement): number {
  const rank = RANK(a) - RANK(b);
  if (rank !== 0) return rank;
  if ('field' in a && 'field' in b) return compareStrings(a.field, b.field);
  if ('key' in a && 'key' in b) {
    for (let i = 0; i < Math.max(a.key.length, b.key.length); i++) {
      const x = a.key[i];
      const y = b.key[i];
      if (!x) return -1;
      if (!y) return 1;
      const byName = compareStrings(x[0], y[0]);
      if (byName !== 0) return byName;
      const byValue = compareValues(x[1], y[1]);
      if (byValue !== 0) return byValue;
    }
    return 0;
  }
  if ('value' in a && 'value' in b) return compareValues(a.value, b.value);
  if ('index' in a && 'index' in b) return a.index - b.index;
  return 0;
}

/** Go's string order (strings.Compare, sort.Strings): by code unit, not by locale. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareValues(a: JsonValue, b: JsonValue): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b);
  return compareStrings(JSON.stringify(a), JSON.stringify(b));
}

/** fieldpath.Path's String(): `.spec.containers[name="app"].image` (values as Go's %q and %v print them). */
export function pathString(path: FieldPath): string {
  return path
    .map((pe) => {
      if ('field' in pe) return `.${pe.field}`;
      if ('key' in pe) return `[${pe.key.map(([name, value]) => `${name}=${JSON.stringify(value)}`).join(',')}]`;
      if ('value' in pe) return `[=${JSON.stringify(pe.value)}]`;
      return `[${pe.index}]`;
    })
    .join('');
}

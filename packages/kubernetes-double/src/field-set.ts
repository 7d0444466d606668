import { compareElements, type FieldPath, parseElement, type PathElement, serializeElement } from './field-path.js';
import type { JsonObject, JsonValue } from './json.js';
import { childSchema, elementSchema, isNamedField, type Schema } from './schema.js';

/**
 * A set of field paths, kept as structured-merge-diff keeps it: a trie whose nodes hold the
 * elements that are members (paths that end here) and the children (paths that go on). The same
 * element can be both. The set operations are the library's, including their non-recursive edges
 * (a member in one set does not remove the other set's children under it).
 */
export class FieldSet {
  private readonly members = new Map<string, PathElement>();
  private readonly children = new Map<string, { pe: PathElement; set: FieldSet }>();

  static of(...paths: FieldPath[]): FieldSet {
    const set = new FieldSet();
    for (const path of paths) set.insert(path);
    return set;
  }

  /** The empty path stands for the whole object, whose ownership is not tracked. */
  insert(path: FieldPath): void {
    if (path.length === 0) return;
    const [first, ...rest] = path;
    if (rest.length === 0) this.members.set(serializeElement(first!), first!);
    else this.descend(first!).insert(rest);
  }

  has(path: FieldPath): boolean {
    const [first, ...rest] = path;
    if (!first) return false;
    if (rest.length === 0) return this.members.has(serializeElement(first));
    return this.children.get(serializeElement(first))?.set.has(rest) ?? false;
  }

  hasMember(pe: PathElement): boolean {
    return this.members.has(serializeElement(pe));
  }

  /** The paths under `pe`, without it (empty when there are none). */
  withPrefix(pe: PathElement): FieldSet {
    return this.children.get(serializeElement(pe))?.set ?? new FieldSet();
  }

  isEmpty(): boolean {
    if (this.members.size > 0) return false;
    for (const { set } of this.children.values()) if (!set.isEmpty()) return false;
    return true;
  }

  union(other: FieldSet): FieldSet {
    const out = this.copy();
    for (const [k, pe] of other.members) out.members.set(k, pe);
    for (const [k, { pe, set }] of other.children) {
      const mine = out.children.get(k);
      out.children.set(k, { pe, set: mine ? mine.set.union(set) : set.copy() });
    }
    return out;
  }

  intersection(other: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [k, pe] of this.members) if (other.members.has(k)) out.members.set(k, pe);
    for (const [k, { pe, set }] of this.children) {
      const theirs = other.children.get(k);
      if (theirs) out.children.set(k, { pe, set: set.intersection(theirs.set) });
    }
    return out.pruned();
  }

  difference(other: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [k, pe] of this.members) if (!other.members.has(k)) out.members.set(k, pe);
    for (const [k, { pe, set }] of this.children) {
      const theirs = other.children.get(k);
      out.children.set(k, { pe, set: theirs ? set.difference(theirs.set) : set.copy() });
    }
    return out.pruned();
  }

  /** Removes other's paths and everything under its members. */
  recursiveDifference(other: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [k, pe] of this.members) if (!other.members.has(k)) out.members.set(k, pe);
    for (const [k, { pe, set }] of this.children) {
      if (other.members.has(k)) continue;
      const theirs = other.children.get(k);
      out.children.set(k, { pe, set: theirs ? set.recursiveDifference(theirs.set) : set.copy() });
    }
    return out.pruned();
  }

  /** Also owns the struct fields that lead to owned paths (not map keys): what prune removes. */
  ensureNamedFieldsAreMembers(schema: Schema): FieldSet {
    const out = new FieldSet();
    for (const [k, pe] of this.members) out.members.set(k, pe);
    for (const [k, { pe, set }] of this.children) {
      const child = 'field' in pe ? childSchema(schema, pe.field, undefined) : elementSchema(schema, undefined);
      const childOrStruct: Schema = child.type === 'scalar' ? { type: 'struct', fields: {}, open: true } : child;
      if ('field' in pe && isNamedField(schema, pe.field)) out.members.set(k, pe);
      out.children.set(k, { pe, set: set.ensureNamedFieldsAreMembers(childOrStruct) });
    }
    return out;
  }

  /** Every path in the set, in structured-merge-diff's order. */
  paths(prefix: FieldPath = []): FieldPath[] {
    const out: FieldPath[] = [];
    const elements = new Map<string, PathElement>([...this.members, ...[...this.children].map(([k, c]) => [k, c.pe] as const)]);
    for (const [k, pe] of [...elements].sort(([, a], [, b]) => compareElements(a, b))) {
      if (this.members.has(k)) out.push([...prefix, pe]);
      const child = this.children.get(k);
      if (child) out.push(...child.set.paths([...prefix, pe]));
    }
    return out;
  }

  equals(other: FieldSet): boolean {
    return JSON.stringify(this.toFieldsV1()) === JSON.stringify(other.toFieldsV1());
  }

  /** The FieldsV1 trie: `{"f:data":{".":{},"f:key":{}}}`, keys in the library's order. */
  toFieldsV1(): JsonObject {
    return this.emit(false);
  }

  static fromFieldsV1(value: JsonValue | undefined): FieldSet {
    const set = new FieldSet();
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return set;
    for (const [key, inner] of Object.entries(value)) {
      if (key === '.') continue;
      const pe = parseElement(key);
      if (!pe) continue;
      const isObject = inner !== null && typeof inner === 'object' && !Array.isArray(inner);
      const child = FieldSet.fromFieldsV1(inner);
      const innerKeys = isObject ? Object.keys(inner) : [];
      // `{}` is a member; `{".": {}, ...}` is a member with children; `{...}` only children.
      if (innerKeys.length === 0 || innerKeys.includes('.')) set.members.set(serializeElement(pe), pe);
      if (!child.isEmpty()) set.children.set(serializeElement(pe), { pe, set: child });
    }
    return set;
  }

  private emit(includeSelf: boolean): JsonObject {
    const out: JsonObject = {};
    const liveChildren = [...this.children].filter(([, c]) => !c.set.isEmpty());
    if (includeSelf && (this.members.size > 0 || liveChildren.length > 0)) out['.'] = {};
    const elements = new Map<string, PathElement>([...this.members, ...liveChildren.map(([k, c]) => [k, c.pe] as const)]);
    for (const [k] of [...elements].sort(([, a], [, b]) => compareElements(a, b))) {
      const child = this.children.get(k);
      const isMember = this.members.has(k);
      out[k] = child && !child.set.isEmpty() ? child.set.emit(isMember) : {};
    }
    return out;
  }

  private descend(pe: PathElement): FieldSet {
    const k = serializeElement(pe);
    let child = this.children.get(k);
    if (!child) {
      child = { pe, set: new FieldSet() };
      this.children.set(k, child);
    }
    return child.set;
  }

  private copy(): FieldSet {
    const out = new FieldSet();
    for (const [k, pe] of this.members) out.members.set(k, pe);
    for (const [k, { pe, set }] of this.children) out.children.set(k, { pe, set: set.copy() });
    return out;
  }

  private pruned(): FieldSet {
    for (const [k, { set }] of this.children) if (set.isEmpty()) this.children.delete(k);
    return this;
  }
}

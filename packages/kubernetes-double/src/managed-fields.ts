import { compareStrings as cmp, type FieldPath, pathString } from './field-path.js';
import { FieldSet } from './field-set.js';
import { isJsonObject, type JsonObject, type JsonValue } from './json.js';

/** One `metadata.managedFields` entry, its field set decoded. */
export interface ManagerEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  subresource?: string;
  /** RFC 3339, seconds. */
  time?: string;
  set: FieldSet;
}

/**
 * Entries by manager identifier, as apimachinery keys them: the entry's JSON without its fields
 * and time, and without apiVersion for appliers (so an applier is one manager across versions).
 */
export type Managers = Map<string, ManagerEntry>;

export function managerIdentifier(entry: Pick<ManagerEntry, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  return JSON.stringify({
    manager: entry.manager,
    operation: entry.operation,
    ...(entry.operation === 'Update' && entry.apiVersion ? { apiVersion: entry.apiVersion } : {}),
    ...(entry.subresource ? { subresource: entry.subresource } : {}),
  });
}

/** Decodes `metadata.managedFields`; undefined when an entry is malformed (as DecodeManagedFields errs). */
export function decodeManagedFields(value: JsonValue | undefined): Managers | undefined {
  const managers: Managers = new Map();
  if (value === undefined || value === null) return managers;
  if (!Array.isArray(value)) return undefined;
  for (const raw of value) {
    if (!isJsonObject(raw)) return undefined;
    const { manager, operation, apiVersion, fieldsType, time, subresource } = raw;
    if (operation !== 'Apply' && operation !== 'Update') return undefined;
    if (typeof apiVersion !== 'string' || apiVersion === '') return undefined;
    if (fieldsType !== 'FieldsV1') return undefined;
    const entry: ManagerEntry = {
      manager: typeof manager === 'string' ? manager : '',
      operation,
      apiVersion,
      ...(typeof subresource === 'string' && subresource ? { subresource } : {}),
      ...(typeof time === 'string' ? { time } : {}),
      set: FieldSet.fromFieldsV1(raw.fieldsV1),
    };
    managers.set(managerIdentifier(entry), entry);
  }
  return managers;
}

/** Encodes managers in the API server's order: Apply before Update, then by time, manager, apiVersion. */
export function encodeManagedFields(managers: Managers): JsonObject[] | undefined {
  if (managers.size === 0) return undefined;
  const seconds = (t?: string) => (t ? Math.floor(Date.parse(t) / 1000) : 0);
  return [...managers.values()]
    .sort(
      (p, q) =>
        cmp(p.operation, q.operation) ||
        seconds(p.time) - seconds(q.time) ||
        cmp(p.manager, q.manager) ||
        cmp(p.apiVersion, q.apiVersion) ||
        cmp(p.subresource ?? '', q.subresource ?? ''),
    )
    .map((e) => ({
      manager: e.manager,
      operation: e.operation,
      apiVersion: e.apiVersion,
      ...(e.time ? { time: e.time } : {}),
      fieldsType: 'FieldsV1',
      fieldsV1: e.set.toFieldsV1(),
      ...(e.subresource ? { subresource: e.subresource } : {}),
    }));
}

export interface Conflict {
  manager: ManagerEntry;
  path: FieldPath;
}

/** How ManagedFields' conflict error names a manager: `"kubectl"`, or `"kubectl-create" using v1`. */
export function printManager(entry: ManagerEntry): string {
  let text = JSON.stringify(entry.manager);
  if (entry.subresource) text += ` with subresource ${JSON.stringify(entry.subresource)}`;
  if (entry.operation === 'Update') text += ` using ${entry.apiVersion}`;
  return text;
}

/** The message of the 409 that a conflicting apply gets (internal/conflict.go). */
export function conflictMessage(conflicts: readonly Conflict[]): string {
  if (conflicts.length === 1) {
    const [only] = conflicts;
    return `Apply failed with 1 conflict: conflict with ${printManager(only!.manager)}: ${pathString(only!.path)}`;
  }
  const byManager = new Map<string, { entry: ManagerEntry; paths: FieldPath[] }>();
  for (const c of conflicts) {
    const id = managerIdentifier(c.manager);
    const group = byManager.get(id) ?? { entry: c.manager, paths: [] };
    group.paths.push(c.path);
    byManager.set(id, group);
  }
  const lines: string[] = [];
  for (const id of [...byManager.keys()].sort(cmp)) {
    const { entry, paths } = byManager.get(id)!;
    lines.push(`conflicts with ${printManager(entry)}:`);
    for (const path of paths) lines.push(`- ${pathString(path)}`);
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}

import { compareStrings, type FieldPath, pathString } from './field-path.js';
import { FieldSet } from './field-set.js';
import { cloneJson, isJsonObject, jsonEqual, type JsonObject, type JsonValue } from './json.js';
import {
  type Conflict,
  conflictMessage,
  decodeManagedFields,
  encodeManagedFields,
  managerIdentifier,
  type Managers,
  printManager,
} from './managed-fields.js';
import type { Schema } from './schema.js';
import { applyConflict, badRequest, internalError } from './status-error.js';
import { compare, type Comparison, merge, removeItems, toFieldSet } from './typed-value.js';

/**
 * Server-side field management: apimachinery's FieldManager stack (version check, last-applied
 * sync, skip-non-applied, cap of ten updaters, manager info, timestamps, stripped metadata) around
 * structured-merge-diff's Updater (update, apply, prune), over the double's JSON objects.
 */
export interface FieldManagerScope {
  schema: Schema;
  apiVersion: string;
  kind: string;
  /** Fields no manager owns through this endpoint (a workload's status, reset on the main resource). */
  ignored?: FieldSet;
  now: () => string;
}

const MAX_UPDATE_MANAGERS = 10;
const CURRENT_OPERATION = 'current-operation';
const BEFORE_FIRST_APPLY = 'before-first-apply';
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** What the API server never attributes to a manager. */
const STRIPPED = FieldSet.of(
  [{ field: 'apiVersion' }],
  [{ field: 'kind' }],
  [{ field: 'metadata' }],
  ...['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion'].map(
    (f): FieldPath => [{ field: 'metadata' }, { field: f }],
  ),
);

export class FieldManager {
  constructor(private readonly scope: FieldManagerScope) {}

  /**
   * Records a non-apply write (create, update, non-apply patch) by `manager`: it takes the fields it
   * changed, from whoever had them. `next` gets its managedFields set; `live` is undefined on create.
   */
  update(live: JsonObject | undefined, next: JsonObject, manager: string): void {
    const requested = (next.metadata as JsonObject | undefined)?.managedFields;
    let managers = this.liveOrRequested(live, requested);
    setManagedFields(next, undefined);
    // Objects that existed before field management (seeded without managedFields) stay untracked.
    if (managers.size === 0 && live !== undefined) return;
    managers = this.updateManagers(live ?? {}, next, managers, manager);
    setManagedFields(next, encodeManagedFields(managers));
  }

  /**
   * Server-side apply of `config` by `manager` onto `live` (an empty object when creating). Answers
   * the object to store, its managedFields set; throws the 409 on conflicts unless `force`.
   */
  apply(live: JsonObject, config: JsonObject, manager: string, force: boolean): JsonObject {
    const { apiVersion, kind } = this.scope;
    if (config.apiVersion !== apiVersion || config.kind !== kind) {
      throw badRequest(`invalid object type: ${gvkString(config.apiVersion, config.kind)}`);
    }
    if (isJsonObject(config.metadata) && config.metadata.managedFields !== undefined) {
      throw badRequest('metadata.managedFields must be nil');
    }
    let managers = decodeManagedFields((live.metadata as JsonObject | undefined)?.managedFields);
    if (!managers) throw internalError('failed to decode managed fields');
    let base = withoutManagedFields(live);
    if (managers.size === 0) {
      // The fields the object already has get an owner, so that applying over them can conflict.
      const empty: JsonObject = {};
      managers = this.updateManagers(empty, base, managers, BEFORE_FIRST_APPLY);
    }

    const id = managerIdentifier({ manager, operation: 'Apply', apiVersion });
    const previous = managers.get(id);
    const merged = (merge(base, config, this.scope.schema) ?? {}) as JsonObject;
    const appliedSet = this.filtered(toFieldSet(config, this.scope.schema));
    managers.set(id, { manager, operation: 'Apply', apiVersion, ...(previous?.time ? { time: previous.time } : {}), set: appliedSet });
    const pruned = this.prune(merged, managers, previous?.set);
    managers = this.resolve(base, pruned, managers, id, force).managers;
    strip(managers, id);

    const changed = !jsonEqual(base, pruned);
    const entry = managers.get(id);
    if (changed && entry) entry.time = this.scope.now();
    base = changed ? pruned : base;
    const result = cloneJson(base);
    if (manager === 'kubectl') syncLastApplied(live, result, config);
    setManagedFields(result, encodeManagedFields(managers));
    return result;
  }

  private liveOrRequested(live: JsonObject | undefined, requested: JsonValue | undefined): Managers {
    // An explicitly empty list (or one empty entry) resets field management, as the real server allows.
    if (Array.isArray(requested) && (requested.length === 0 || (requested.length === 1 && jsonEqual(requested[0], {})))) return new Map();
    const fromRequest = decodeManagedFields(requested);
    if (fromRequest && fromRequest.size > 0) return fromRequest;
    return decodeManagedFields((live?.metadata as JsonObject | undefined)?.managedFields) ?? new Map();
  }

  /** ManagedFieldsUpdater + StripMeta + Updater.Update, then the cap on updaters. */
  private updateManagers(live: JsonObject, next: JsonObject, managers: Managers, manager: string): Managers {
    const { apiVersion } = this.scope;
    const current = JSON.stringify({ manager: CURRENT_OPERATION });
    const { managers: updated, comparison } = this.resolve(withoutManagedFields(live), withoutManagedFields(next), managers, current, true);
    const set = this.filtered(comparison.modified.union(comparison.added));
    const taken = set.difference(STRIPPED);
    if (!taken.isEmpty()) {
      const id = managerIdentifier({ manager, operation: 'Update', apiVersion });
      const previous = updated.get(id);
      updated.set(id, {
        manager,
        operation: 'Update',
        apiVersion,
        set: previous ? taken.union(previous.set) : taken,
        time: this.scope.now(),
      });
    }
    return capUpdaters(updated);
  }

  /**
   * Updater.update: the fields that changed leave every other manager; conflicts (changed fields
   * another manager owns) fail the request unless forced.
   */
  private resolve(
    oldObject: JsonObject,
    newObject: JsonObject,
    managers: Managers,
    workflow: string,
    force: boolean,
  ): { managers: Managers; comparison: Comparison } {
    const raw = compare(oldObject, newObject, this.scope.schema);
    const comparison: Comparison = {
      added: this.filtered(raw.added),
      modified: this.filtered(raw.modified),
      removed: this.filtered(raw.removed),
    };
    const changed = comparison.modified.union(comparison.added);
    const conflicts: Conflict[] = [];
    const next: Managers = new Map();
    for (const [id, entry] of managers) {
      if (id === workflow) {
        next.set(id, entry);
        continue;
      }
      const conflicting = entry.set.intersection(changed);
      for (const path of conflicting.paths()) conflicts.push({ manager: entry, path });
      const set = entry.set.difference(conflicting).difference(comparison.removed);
      if (!set.isEmpty()) next.set(id, { ...entry, set });
    }
    if (!force && conflicts.length > 0) {
      conflicts.sort((a, b) => compareStrings(managerIdentifier(a.manager), managerIdentifier(b.manager)));
      throw applyConflict(
        conflictMessage(conflicts),
        conflicts.map((c) => ({
          reason: 'FieldManagerConflict',
          message: `conflict with ${printManager(c.manager)}`,
          field: pathString(c.path),
        })),
      );
    }
    return { managers: next, comparison };
  }

  /**
   * Updater.prune: removes what the applier applied last time and not now, unless another manager
   * (or the applier's new configuration) owns it.
   */
  private prune(merged: JsonObject, managers: Managers, lastSet: FieldSet | undefined): JsonObject {
    if (!lastSet || lastSet.isEmpty()) return merged;
    const { schema } = this.scope;
    const named = (set: FieldSet) => set.ensureNamedFieldsAreMembers(schema);
    const asObject = (v: JsonValue) => (isJsonObject(v) ? v : {});
    const last = named(lastSet);
    let owned = new FieldSet();
    for (const entry of managers.values()) owned = owned.union(entry.set);
    const mergedSet = named(toFieldSet(merged, schema));
    const pruned = asObject(removeItems(merged, last, schema));
    const ownedBack = asObject(removeItems(merged, mergedSet.difference(named(toFieldSet(pruned, schema)).union(named(owned))), schema));
    const dangling = mergedSet.difference(named(toFieldSet(ownedBack, schema))).intersection(last);
    return asObject(removeItems(merged, dangling, schema));
  }

  private filtered(set: FieldSet): FieldSet {
    return this.scope.ignored ? set.recursiveDifference(this.scope.ignored) : set;
  }
}

function strip(managers: Managers, id: string): void {
  const entry = managers.get(id);
  if (!entry) return;
  const set = entry.set.difference(STRIPPED);
  if (set.isEmpty()) managers.delete(id);
  else managers.set(id, { ...entry, set });
}

/** More than ten updaters: the oldest are folded, per apiVersion, into one `ancient-changes` entry. */
function capUpdaters(managers: Managers): Managers {
  const updaters = [...managers].filter(([, e]) => e.operation === 'Update');
  if (updaters.length <= MAX_UPDATE_MANAGERS) return managers;
  const seconds = (t?: string) => (t ? Math.floor(Date.parse(t) / 1000) : 0);
  updaters.sort(([ia, a], [ib, b]) => seconds(a.time) - seconds(b.time) || compareStrings(ia, ib));
  const out = new Map(managers);
  const firstByVersion = new Map<string, string>();
  let length = updaters.length;
  for (const [id, entry] of updaters) {
    if (length <= MAX_UPDATE_MANAGERS) break;
    const bucketId = managerIdentifier({ manager: 'ancient-changes', operation: 'Update', apiVersion: entry.apiVersion });
    const first = firstByVersion.get(entry.apiVersion);
    if (first === undefined) {
      firstByVersion.set(entry.apiVersion, id);
      continue;
    }
    if (!out.has(bucketId)) {
      const oldest = out.get(first)!;
      out.delete(first);
      out.set(bucketId, { ...oldest, manager: 'ancient-changes' });
    }
    const bucket = out.get(bucketId)!;
    out.set(bucketId, { ...bucket, set: entry.set.union(bucket.set), ...(entry.time ? { time: entry.time } : {}) });
    out.delete(id);
    length--;
  }
  return out;
}

/** kubectl's server-side apply keeps a client-side apply annotation, where there is one, in step. */
function syncLastApplied(live: JsonObject, result: JsonObject, config: JsonObject): void {
  const annotations = (live.metadata as JsonObject | undefined)?.annotations;
  if (!isJsonObject(annotations) || typeof annotations[LAST_APPLIED] !== 'string' || annotations[LAST_APPLIED] === '') return;
  const applied = cloneJson(config);
  const appliedAnnotations = (applied.metadata as JsonObject | undefined)?.annotations;
  if (isJsonObject(appliedAnnotations)) delete appliedAnnotations[LAST_APPLIED];
  const target = (result.metadata ??= {}) as JsonObject;
  const targetAnnotations = (target.annotations ??= {}) as JsonObject;
  targetAnnotations[LAST_APPLIED] = JSON.stringify(applied);
}

function withoutManagedFields(object: JsonObject): JsonObject {
  const copy = cloneJson(object);
  if (isJsonObject(copy.metadata)) delete copy.metadata.managedFields;
  return copy;
}

function setManagedFields(object: JsonObject, entries: JsonObject[] | undefined): void {
  const metadata = (object.metadata ??= {}) as JsonObject;
  if (entries) metadata.managedFields = entries;
  else delete metadata.managedFields;
}

/** schema.GroupVersionKind's String(): `apps/v1, Kind=Deployment`, `/v1, Kind=Secret`. */
function gvkString(apiVersion: JsonValue | undefined, kind: JsonValue | undefined): string {
  const gv = typeof apiVersion === 'string' ? apiVersion : '';
  const slash = gv.indexOf('/');
  const group = slash >= 0 ? gv.slice(0, slash) : '';
  const version = slash >= 0 ? gv.slice(slash + 1) : gv;
  return `${group}/${version}, Kind=${typeof kind === 'string' ? kind : ''}`;
}

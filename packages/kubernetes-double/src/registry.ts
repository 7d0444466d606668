import { randomUUID } from 'node:crypto';

import { formatTime } from './api-time.js';
import type { Clock } from './clock.js';
import { FieldManager } from './field-manager.js';
import { matchesFields, parseFieldSelector } from './field-selector.js';
import { cloneJson, isJsonObject, jsonEqual, type JsonObject, type JsonValue, metadataOf, stringAt, stringMapAt } from './json.js';
import { DecodeError, type KindStrategy, strategyFor } from './kinds/index.js';
import { matchesLabels, parseLabelSelector } from './label-selector.js';
import type { ObjectStore } from './object-store.js';
import { apiVersionOf, groupResourceOf, type ResourceType, resourceTypeByName, resourceTypeOfKind } from './resource-types.js';
import {
  alreadyExists,
  badRequest,
  conflict,
  invalid,
  type KubeStatusError,
  notFound,
  OPTIMISTIC_LOCK_MESSAGE,
  unknownServerError,
} from './status-error.js';
import { toTypedForm } from './typed-form.js';
import { dropUnknownFields, unknownFields } from './unknown-fields.js';

/** Where a request points: a resource type, its namespace (namespaced kinds) and maybe a name. */
export interface Target {
  type: ResourceType;
  namespace?: string;
  name?: string;
}

export interface WriteResult {
  object: JsonObject;
  created: boolean;
}

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

export interface WriteOptions {
  /** The field manager: the fieldManager parameter, else the user agent's product name. */
  manager: string;
  fieldValidation: FieldValidation;
  /** Collects the `Warning` headers of the response (unknown fields under Warn). */
  warnings: string[];
  /**
   * For a PATCH or PUT: the authorizer's check of `create`, run when the write turns out to create
   * the object (see authorizeCreateOnWrite); a POST was authorized as create by the filter already.
   */
  authorizeCreate?: () => void;
}

/** How a decode failure is reported depends on the verb; each caller words it (see patch-handler). */
export type DecodeFailure = (error: DecodeError, object: JsonObject) => KubeStatusError;

const GENERATE_NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/**
 * The generic registry (k8s.io/apiserver's registry.Store) with each kind's strategy: what create,
 * update and delete do to an object before it is stored, including resourceVersion preconditions
 * and the field manager's bookkeeping. Errors are thrown as KubeStatusError.
 */
export class Registry {
  constructor(
    private readonly store: ObjectStore,
    private readonly clock: Clock,
  ) {}

  fieldManager(strategy: KindStrategy): FieldManager {
    return new FieldManager({
      schema: strategy.schema,
      apiVersion: apiVersionOf(strategy.type),
      kind: strategy.type.kind,
      ...(strategy.resetFields ? { ignored: strategy.resetFields } : {}),
      now: () => formatTime(this.clock.now()),
    });
  }

  get(target: Target & { name: string }): JsonObject {
    const object = this.store.snapshot(target.type, target.namespace, target.name);
    if (!object) throw notFound(groupResourceOf(target.type), target.name);
    return served(target.type, object);
  }

  /** The stored object as served (for patching), or undefined. */
  getOrUndefined(target: Target & { name: string }): JsonObject | undefined {
    const object = this.store.snapshot(target.type, target.namespace, target.name);
    return object ? served(target.type, object) : undefined;
  }

  list(target: Target, query: { labelSelector?: string; fieldSelector?: string }): JsonObject[] {
    const strategy = strategyFor(target.type);
    const labels = parseLabelSelector(query.labelSelector ?? '');
    const fields = parseFieldSelector(query.fieldSelector ?? '', [
      'metadata.name',
      ...(target.type.namespaced ? ['metadata.namespace'] : []),
      ...Object.keys(strategy.selectableFields?.({}) ?? {}),
    ]);
    const view = strategy.fromStorage;
    return this.store
      .list(target.type, target.namespace)
      .map((object) => (view ? view(cloneJson(object)) : cloneJson(object)))
      .filter((object) => {
        const metadata = metadataOf(object);
        const selectable = {
          'metadata.name': stringAt(metadata, 'name') ?? '',
          ...(target.type.namespaced ? { 'metadata.namespace': stringAt(metadata, 'namespace') ?? '' } : {}),
          ...strategy.selectableFields?.(object),
        };
        return matchesLabels(labels, stringMapAt(metadata, 'labels')) && matchesFields(fields, selectable);
      });
  }

  /** POST: a new object from a decoded body. */
  create(target: Target, body: JsonObject, options: WriteOptions): JsonObject {
    const strategy = strategyFor(target.type);
    const object = this.decodedBody(strategy, body, options);
    this.checkNamespace(target, object);
    this.fieldManager(strategy).update(undefined, object, options.manager);
    return this.storeNew(target, strategy, object, true);
  }

  /** PUT: a whole object replaces the stored one, under its resourceVersion (or creates one where allowed). */
  update(target: Target & { name: string }, body: JsonObject, options: WriteOptions): WriteResult {
    const { manager } = options;
    const strategy = strategyFor(target.type);
    const object = this.decodedBody(strategy, body, options);
    checkName(object, target.name);
    this.checkNamespace(target, object);
    const existing = this.store.snapshot(target.type, target.namespace, target.name);
    if (!existing) {
      if (!strategy.allowCreateOnUpdate) throw notFound(groupResourceOf(target.type), target.name);
      this.fieldManager(strategy).update(undefined, object, manager);
      return { object: this.storeNew(target, strategy, object, false, options.authorizeCreate), created: true };
    }
    this.fieldManager(strategy).update(existing, object, manager);
    return { object: this.storeUpdate(target, strategy, existing, object), created: false };
  }

  /**
   * The end of every patch: `next` is the patched object (decoded by the caller, managed fields
   * done). Creates it when there was none (server-side apply only), if `authorizeCreate` allows.
   */
  commitPatch(
    target: Target & { name: string },
    strategy: KindStrategy,
    existing: JsonObject | undefined,
    next: JsonObject,
    authorizeCreate?: () => void,
  ): WriteResult {
    checkName(next, target.name);
    this.checkNamespace(target, next);
    if (!existing) {
      if (stringAt(metadataOf(next), 'uid')) {
        throw conflict(
          groupResourceOf(target.type),
          target.name,
          `uid mismatch: the provided object specified uid ${stringAt(metadataOf(next), 'uid')}, and no existing object was found`,
        );
      }
      return { object: this.storeNew(target, strategy, next, false, authorizeCreate), created: true };
    }
    return { object: this.storeUpdate(target, strategy, existing, next), created: false };
  }

  /** DELETE, with optional uid/resourceVersion preconditions; finalizers make it a graceful mark. */
  delete(target: Target & { name: string }, preconditions: { uid?: string; resourceVersion?: string }): JsonObject {
    const gr = groupResourceOf(target.type);
    const existing = this.store.snapshot(target.type, target.namespace, target.name);
    if (!existing) throw notFound(gr, target.name);
    const metadata = metadataOf(existing);
    if (preconditions.uid && preconditions.uid !== stringAt(metadata, 'uid')) {
      throw conflict(
        gr,
        target.name,
        `Precondition failed: UID in precondition: ${preconditions.uid}, UID in object meta: ${stringAt(metadata, 'uid') ?? ''}`,
      );
    }
    if (preconditions.resourceVersion && preconditions.resourceVersion !== stringAt(metadata, 'resourceVersion')) {
      throw conflict(
        gr,
        target.name,
        `Precondition failed: ResourceVersion in precondition: ${preconditions.resourceVersion}, ResourceVersion in object meta: ${stringAt(metadata, 'resourceVersion') ?? ''}`,
      );
    }
    const finalizers = Array.isArray(metadata.finalizers) ? metadata.finalizers : [];
    if (finalizers.length > 0) {
      // Finalizers hold the object until whoever owns them removes them (by an update).
      if (metadata.deletionTimestamp === undefined) {
        metadata.deletionTimestamp = formatTime(this.clock.now());
        metadata.deletionGracePeriodSeconds = 0;
        metadata.resourceVersion = this.store.nextResourceVersion();
        this.store.put(target.type, existing);
      }
      return withTypeMeta(target.type, cloneJson(existing));
    }
    this.store.remove(target.type, target.namespace, target.name);
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name: target.name, ...(gr.group ? { group: gr.group } : {}), kind: gr.resource, uid: stringAt(metadata, 'uid') ?? '' },
    };
  }

  /** A POST or PUT body: unknown fields refused (Strict) or warned about (Warn), then decoded. */
  private decodedBody(strategy: KindStrategy, body: JsonObject, options: WriteOptions): JsonObject {
    const { kind } = strategy.type;
    const expected = apiVersionOf(strategy.type);
    if (body.apiVersion !== undefined && body.apiVersion !== expected) {
      throw badRequest(`the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${expected})`);
    }
    if (body.kind !== undefined && body.kind !== kind) {
      throw badRequest(
        `${kind} in version ${JSON.stringify(strategy.type.version)} cannot be handled as a ${kind}: no kind ${JSON.stringify(body.kind)} is registered for version ${JSON.stringify(expected)}`,
      );
    }
    const checked = this.checkUnknownFields(strategy, body, options, (message) => bodyDecodeError(strategy, new DecodeError(message)));
    return this.decoded(strategy, checked, (error) => bodyDecodeError(strategy, error));
  }

  /**
   * Strict field validation: unknown fields are an error (worded by `failure`); Warn (the default)
   * answers them as warnings; both drop them, as decoding into the Go type does.
   */
  checkUnknownFields(
    strategy: KindStrategy,
    object: JsonObject,
    options: WriteOptions,
    failure: (message: string) => KubeStatusError,
  ): JsonObject {
    const unknown = unknownFields(object, strategy.schema).map((field) => `unknown field ${JSON.stringify(field)}`);
    if (unknown.length > 0) {
      if (options.fieldValidation === 'Strict') throw failure(`strict decoding error: ${unknown.join(', ')}`);
      if (options.fieldValidation === 'Warn') options.warnings.push(...unknown);
    }
    const copy = cloneJson(object);
    dropUnknownFields(copy, strategy.schema);
    return copy;
  }

  /** Decodes a wire object into the stored form and defaults it; the caller says how to report failure. */
  decoded(strategy: KindStrategy, body: JsonObject, failure: (error: DecodeError) => KubeStatusError): JsonObject {
    const object = cloneJson(body);
    try {
      strategy.decode(object);
    } catch (error) {
      if (error instanceof DecodeError) throw failure(error);
      throw error;
    }
    object.apiVersion = apiVersionOf(strategy.type);
    object.kind = strategy.type.kind;
    strategy.applyDefaults(object);
    return object;
  }

  /** Objects seeded by tests: server fields filled in, no validation and no field management. */
  seed(object: JsonObject): JsonObject {
    const type = typeOfObject(object);
    const strategy = strategyFor(type);
    const decoded = this.decoded(strategy, object, (error) => badRequest(error.message));
    const metadata = metadataOf(decoded);
    if (type.namespaced) metadata.namespace ??= 'default';
    metadata.uid ??= randomUUID();
    metadata.creationTimestamp ??= formatTime(this.clock.now());
    if (strategy.resetFields && metadata.generation === undefined) metadata.generation = 1;
    metadata.resourceVersion = this.store.nextResourceVersion();
    decoded.metadata = metadata;
    const stored = toTypedForm(decoded, strategy.schema, strategy.alwaysPresent);
    this.store.put(type, stored);
    return withTypeMeta(type, cloneJson(stored));
  }

  private checkNamespace(target: Target, object: JsonObject): void {
    const metadata = metadataOf(object);
    const namespace = stringAt(metadata, 'namespace');
    if (!target.type.namespaced) {
      if (namespace) throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      return;
    }
    if (namespace && namespace !== target.namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    metadata.namespace = target.namespace ?? '';
    object.metadata = metadata;
  }

  /**
   * A create; `posted` for POST, whose body may not name a resourceVersion (the storage layer refuses
   * it). In the API server's order: admission (the namespace must exist), the strategy's
   * preparation and validation, then createValidation (`authorizeCreate`), then storage.
   */
  private storeNew(target: Target, strategy: KindStrategy, object: JsonObject, posted = false, authorizeCreate?: () => void): JsonObject {
    const gr = groupResourceOf(target.type);
    const namespaces = resourceTypeByName('namespaces')!;
    if (target.type.namespaced && !this.store.get(namespaces, undefined, target.namespace ?? '')) {
      throw notFound(groupResourceOf(namespaces), target.namespace ?? '');
    }
    const metadata = metadataOf(object);
    const generateName = stringAt(metadata, 'generateName');
    if (!stringAt(metadata, 'name') && generateName) metadata.name = generatedName(generateName);
    strategy.prepareForCreate(object);
    metadata.uid = randomUUID();
    metadata.creationTimestamp = formatTime(this.clock.now());
    delete metadata.deletionTimestamp;
    delete metadata.deletionGracePeriodSeconds;
    delete metadata.selfLink;
    if (!strategy.resetFields) delete metadata.generation;
    object.metadata = metadata;
    const name = stringAt(metadata, 'name') ?? '';
    const errors = strategy.validate(object);
    if (errors.length > 0) throw invalid({ group: target.type.group, kind: target.type.kind }, name, errors);
    authorizeCreate?.();
    if (posted && stringAt(metadata, 'resourceVersion'))
      throw unknownServerError('resourceVersion should not be set on objects to be created');
    delete metadata.resourceVersion;
    if (this.store.get(target.type, target.namespace, name)) throw alreadyExists(gr, name);
    metadata.resourceVersion = this.store.nextResourceVersion();
    const stored = toTypedForm(object, strategy.schema, strategy.alwaysPresent);
    this.store.put(target.type, stored);
    return withTypeMeta(target.type, cloneJson(stored));
  }

  private storeUpdate(target: Target & { name: string }, strategy: KindStrategy, existing: JsonObject, object: JsonObject): JsonObject {
    const gr = groupResourceOf(target.type);
    const metadata = metadataOf(object);
    const oldMeta = metadataOf(existing);
    const requestedVersion = stringAt(metadata, 'resourceVersion') ?? '';
    if (requestedVersion === '') {
      if (!strategy.allowUnconditionalUpdate) {
        throw invalid({ group: gr.group, kind: gr.resource }, target.name, [
          { type: 'Invalid', field: 'metadata.resourceVersion', value: 0, detail: 'must be specified for an update' },
        ]);
      }
      metadata.resourceVersion = oldMeta.resourceVersion ?? '';
    } else if (requestedVersion !== oldMeta.resourceVersion) {
      throw conflict(gr, target.name, OPTIMISTIC_LOCK_MESSAGE);
    }
    // rest.BeforeUpdate: the server keeps its own fields.
    if (oldMeta.generation !== undefined) metadata.generation = oldMeta.generation;
    else delete metadata.generation;
    strategy.prepareForUpdate(object, existing);
    if (!stringAt(metadata, 'uid')) metadata.uid = oldMeta.uid ?? '';
    if (oldMeta.creationTimestamp !== undefined) metadata.creationTimestamp = oldMeta.creationTimestamp;
    delete metadata.selfLink;
    object.metadata = metadata;
    const errors = strategy.validateUpdate(object, existing);
    if (errors.length > 0) throw invalid({ group: target.type.group, kind: target.type.kind }, target.name, errors);

    let next = toTypedForm(object, strategy.schema, strategy.alwaysPresent);
    next = keepManagedFieldsTimes(next, existing);
    if (jsonEqual(next, existing)) return withTypeMeta(target.type, cloneJson(existing));
    const finalizers = metadataOf(next).finalizers;
    if (metadataOf(next).deletionTimestamp !== undefined && !(Array.isArray(finalizers) && finalizers.length > 0)) {
      // The last finalizer is gone from an object being deleted: the delete completes.
      this.store.remove(target.type, target.namespace, target.name);
      return withTypeMeta(target.type, next);
    }
    metadataOf(next).resourceVersion = this.store.nextResourceVersion();
    this.store.put(target.type, next);
    return withTypeMeta(target.type, cloneJson(next));
  }
}

/** A body's name must be the URL's (a PUT or patch cannot rename). */
function checkName(object: JsonObject, name: string): void {
  const objectName = stringAt(metadataOf(object), 'name') ?? '';
  if (objectName !== name) throw badRequest(`the name of the object (${objectName}) does not match the name on the URL (${name})`);
}

/** How POST and PUT report a body that does not decode (transformDecodeError). */
export function bodyDecodeError(strategy: KindStrategy, error: DecodeError): KubeStatusError {
  const { kind, version } = strategy.type;
  return badRequest(`${kind} in version ${JSON.stringify(version)} cannot be handled as a ${kind}: ${error.message}`);
}

/**
 * IgnoreManagedFieldsTimestampsTransformer: when nothing but managed-fields timestamps would
 * change, the old timestamps are kept, so that the write is a no-op and the resourceVersion stays.
 */
function keepManagedFieldsTimes(next: JsonObject, existing: JsonObject): JsonObject {
  const nextFields = metadataOf(next).managedFields;
  const oldFields = metadataOf(existing).managedFields;
  if (!Array.isArray(nextFields) || !Array.isArray(oldFields) || nextFields.length !== oldFields.length) return next;
  const withoutTime = (entry: JsonValue) => {
    if (!isJsonObject(entry)) return entry;
    const { time: _time, ...rest } = entry;
    return rest;
  };
  if (!nextFields.every((entry, i) => jsonEqual(withoutTime(entry), withoutTime(oldFields[i]!)))) return next;
  const strip = (object: JsonObject) => {
    const copy = cloneJson(object);
    delete metadataOf(copy).managedFields;
    return copy;
  };
  if (!jsonEqual(strip(next), strip(existing))) return next;
  const out = cloneJson(next);
  metadataOf(out).managedFields = cloneJson(oldFields);
  return out;
}

function generatedName(base: string): string {
  const prefix = base.length > 58 ? base.slice(0, 58) : base;
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += GENERATE_NAME_ALPHABET[Math.floor(Math.random() * GENERATE_NAME_ALPHABET.length)];
  return prefix + suffix;
}

/** A stored object as `type` serves it: converted when `type` is a view of another resource. */
function served(type: ResourceType, object: JsonObject): JsonObject {
  const view = strategyFor(type).fromStorage;
  return withTypeMeta(type, view ? view(object) : object);
}

/** Objects are served with kind and apiVersion first, as the API server writes them (TypeMeta's order). */
export function withTypeMeta(type: ResourceType, object: JsonObject): JsonObject {
  const { apiVersion: _a, kind: _k, ...rest } = object;
  return { kind: type.kind, apiVersion: apiVersionOf(type), ...rest };
}

export function typeOfObject(object: JsonObject): ResourceType {
  const { apiVersion, kind } = object;
  const type = typeof apiVersion === 'string' && typeof kind === 'string' ? resourceTypeOfKind(apiVersion, kind) : undefined;
  if (!type) throw badRequest(`no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)}`);
  return type;
}

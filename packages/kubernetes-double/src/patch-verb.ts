import { parse as parseYaml } from 'yaml';

import { invalid as invalidError, required } from './field-errors.js';
import { isJsonObject, type JsonObject, type JsonValue } from './json.js';
import { DecodeError, type KindStrategy, strategyFor } from './kinds/index.js';
import { applyJsonPatch, MalformedPatchError, MAX_JSON_PATCH_OPERATIONS, parseJsonPatch, PatchApplyError } from './patches/json-patch.js';
import { applyMergePatch } from './patches/merge-patch.js';
import { applyStrategicMergePatch, StrategicPatchError } from './patches/strategic-merge-patch.js';
import type { Registry, Target, WriteOptions, WriteResult } from './registry.js';
import { groupResourceOf } from './resource-types.js';
import { badRequest, invalid, KubeStatusError, notFound, unknownServerError, unsupportedMediaType } from './status-error.js';
import { unknownFields } from './unknown-fields.js';

export const JSON_PATCH = 'application/json-patch+json';
export const MERGE_PATCH = 'application/merge-patch+json';
export const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';
export const APPLY_PATCH = 'application/apply-patch+yaml';

/** In the order the API server lists them in its 415. */
export const PATCH_TYPES = [JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH] as const;

export interface PatchOptions extends WriteOptions {
  /** The fieldManager parameter as sent (apply requires it). */
  fieldManagerParam: string | undefined;
  /** The force parameter as sent (only apply may have it). */
  force: boolean | undefined;
}

/**
 * PATCH of one object (handlers/patch.go): the patch is applied to the stored object as served,
 * the result decoded, defaulted and handed to the registry like an update; server-side apply goes
 * through the field manager instead, and creates the object when there is none.
 */
export function patchObject(
  registry: Registry,
  target: Target & { name: string },
  contentType: string,
  body: string,
  options: PatchOptions,
): WriteResult {
  const patchType = contentType.split(';')[0]!.trim();
  if (!(PATCH_TYPES as readonly string[]).includes(patchType)) throw unsupportedMediaType(PATCH_TYPES);
  const patchOptionErrors =
    patchType === APPLY_PATCH
      ? options.fieldManagerParam
        ? []
        : [required('fieldManager', 'is required for apply patch')]
      : options.force !== undefined
        ? [{ type: 'Forbidden' as const, field: 'force', detail: 'may not be specified for non-apply patch' }]
        : [];
  if (patchOptionErrors.length > 0) throw invalid({ group: 'meta.k8s.io', kind: 'PatchOptions' }, '', patchOptionErrors);

  const strategy = strategyFor(target.type);
  const stored = registry.getOrUndefined(target);
  if (patchType === APPLY_PATCH) return applyPatch(registry, strategy, target, stored, body, options);
  if (!stored) throw notFound(groupResourceOf(target.type), target.name);

  const patched = patchedObject(patchType, stored, body, strategy);
  const patchedFailure = (message: string) => invalid({ group: '', kind: '' }, '', [invalidError('patch', patched.shown, message)]);
  const checked = registry.checkUnknownFields(strategy, patched.object, options, patchedFailure);
  const next = registry.decoded(strategy, checked, (error) =>
    patchedFailure(patchType === STRATEGIC_MERGE_PATCH ? unstructuredDecodeError(error) : error.message),
  );
  registry.fieldManager(strategy).update(stored, next, options.manager);
  return registry.commitPatch(target, strategy, stored, next);
}

function patchedObject(patchType: string, stored: JsonObject, body: string, strategy: KindStrategy): { object: JsonObject; shown: string } {
  let document: JsonValue;
  try {
    document = JSON.parse(body) as JsonValue;
  } catch (error) {
    throw badRequest(patchType === JSON_PATCH ? (error as Error).message : 'Invalid JSON Patch');
  }
  let result: JsonValue;
  if (patchType === JSON_PATCH) {
    let operations;
    try {
      operations = parseJsonPatch(document);
    } catch (error) {
      if (error instanceof MalformedPatchError) throw badRequest(error.message);
      throw error;
    }
    if (operations.length > MAX_JSON_PATCH_OPERATIONS) {
      throw new KubeStatusError(
        413,
        'RequestEntityTooLarge',
        `Request entity too large: The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${operations.length}`,
      );
    }
    try {
      result = applyJsonPatch(stored, operations);
    } catch (error) {
      // NewGenericServerResponse(422): the patch library's own words are not passed on.
      if (error instanceof PatchApplyError)
        throw new KubeStatusError(422, 'Invalid', 'the server rejected our request due to an error in our request', {});
      throw error;
    }
  } else if (patchType === MERGE_PATCH) {
    result = applyMergePatch(stored, document);
  } else {
    if (!isJsonObject(document)) throw badRequest('json: cannot unmarshal array into Go value of type map[string]interface {}');
    try {
      result = applyStrategicMergePatch(stored, document, strategy.schema);
    } catch (error) {
      if (error instanceof StrategicPatchError) throw badRequest(error.message);
      throw error;
    }
    return { object: isJsonObject(result) ? result : {}, shown: goValue(document) };
  }
  if (!isJsonObject(result)) {
    throw invalid({ group: '', kind: '' }, '', [
      invalidError('patch', JSON.stringify(result), 'json: cannot unmarshal into Go value of type struct'),
    ]);
  }
  return { object: result, shown: JSON.stringify(result) };
}

function applyPatch(
  registry: Registry,
  strategy: KindStrategy,
  target: Target & { name: string },
  stored: JsonObject | undefined,
  body: string,
  options: PatchOptions,
): WriteResult {
  let config: unknown;
  try {
    config = parseYaml(body, { uniqueKeys: false, maxAliasCount: 100 });
  } catch (error) {
    throw badRequest(`error decoding YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  if (options.fieldValidation === 'Strict') {
    try {
      parseYaml(body, { uniqueKeys: true, maxAliasCount: 100 });
    } catch (error) {
      throw badRequest(`error strict decoding YAML: ${(error as Error).message.split('\n')[0]}`);
    }
  }
  if (!isJsonObject(config)) throw badRequest('error decoding YAML: json: cannot unmarshal into Go value of type map[string]interface {}');
  const where = `${target.namespace ?? ''}/${target.name}; ${gvk(config)}`;
  const unknown = unknownFields(config, strategy.schema);
  if (unknown.length > 0) {
    // The typed conversion of the patch fails before anything is merged, whatever fieldValidation says.
    const errors = unknown.map((path) => `.${path}: field not declared in schema`);
    throw unknownServerError(
      `failed to create typed patch object (${where}): ${errors.length === 1 ? errors[0] : ['errors:', ...errors.map((e) => `  ${e}`)].join('\n')}`,
    );
  }
  const live = stored ?? {};
  const applied = registry.fieldManager(strategy).apply(live, config, options.manager, options.force === true);
  const next = registry.decoded(strategy, applied, (error) =>
    unknownServerError(`failed to convert new object (${where}) to proper version: ${unstructuredDecodeError(error)}`),
  );
  return registry.commitPatch(target, strategy, stored, next, options.authorizeCreate);
}

/** The unstructured converter's wording of a bad `[]byte` (it goes through encoding/json). */
function unstructuredDecodeError(error: DecodeError): string {
  return error.message.startsWith('illegal base64') ? `error decoding from json: ${error.message}` : error.message;
}

function gvk(object: JsonObject): string {
  const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : '';
  const slash = apiVersion.indexOf('/');
  const group = slash >= 0 ? apiVersion.slice(0, slash) : '';
  const version = slash >= 0 ? apiVersion.slice(slash + 1) : apiVersion;
  return `${group}/${version}, Kind=${typeof object.kind === 'string' ? object.kind : ''}`;
}

/** Go's %+v of a decoded JSON value, as a strategic-merge failure prints the patch. */
function goValue(value: JsonValue): string {
  if (value === null) return '<nil>';
  if (Array.isArray(value)) return `[${value.map(goValue).join(' ')}]`;
  if (isJsonObject(value)) {
    return `map[${Object.keys(value)
      .sort()
      .map((k) => `${k}:${goValue(value[k]!)}`)
      .join(' ')}]`;
  }
  return String(value);
}

import { type FieldError, forbidden, invalid, required, tooLong } from './field-errors.js';
import { isJsonObject, jsonEqual, type JsonObject, stringAt, stringMapAt } from './json.js';
import { isDns1123Label, isQualifiedName, isValidLabelValue } from './name-rules.js';

export type NameRule = (name: string) => string[];

const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

/** ValidateObjectMeta: name (or generateName), namespace, labels, annotations, finalizers. */
export function validateObjectMeta(metadata: JsonObject, namespaced: boolean, nameRule: NameRule): FieldError[] {
  const errors: FieldError[] = [];
  const name = stringAt(metadata, 'name') ?? '';
  const generateName = stringAt(metadata, 'generateName') ?? '';
  if (generateName) {
    // A generated name gets a suffix, so only its prefix form is checked (trailing '-' allowed).
    for (const message of nameRule(`${generateName.replace(/-+$/, '')}a`))
      errors.push(invalid('metadata.generateName', generateName, message));
  }
  if (!name) errors.push(required('metadata.name', 'name or generateName is required'));
  else for (const message of nameRule(name)) errors.push(invalid('metadata.name', name, message));
  const namespace = stringAt(metadata, 'namespace') ?? '';
  if (namespaced) {
    if (!namespace) errors.push(required('metadata.namespace'));
    else for (const message of isDns1123Label(namespace)) errors.push(invalid('metadata.namespace', namespace, message));
  } else if (namespace) {
    errors.push(forbidden('metadata.namespace', 'not allowed on this type'));
  }
  errors.push(...validateLabels(stringMapAt(metadata, 'labels'), 'metadata.labels'));
  errors.push(...validateAnnotations(stringMapAt(metadata, 'annotations'), 'metadata.annotations'));
  const finalizers = metadata.finalizers;
  if (Array.isArray(finalizers)) {
    finalizers.forEach((f, i) => {
      if (typeof f !== 'string') return;
      for (const message of isQualifiedName(f)) errors.push(invalid(`metadata.finalizers[${i}]`, f, message));
    });
  }
  return errors;
}

export function validateLabels(labels: Record<string, string>, field: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const [key, value] of Object.entries(labels)) {
    for (const message of isQualifiedName(key)) errors.push(invalid(field, key, message));
    for (const message of isValidLabelValue(value)) errors.push(invalid(field, value, message));
  }
  return errors;
}

export function validateAnnotations(annotations: Record<string, string>, field: string): FieldError[] {
  const errors: FieldError[] = [];
  let size = 0;
  for (const [key, value] of Object.entries(annotations)) {
    for (const message of isQualifiedName(key.toLowerCase())) errors.push(invalid(field, key, message));
    size += key.length + value.length;
  }
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT) errors.push(tooLong(field, TOTAL_ANNOTATION_SIZE_LIMIT));
  return errors;
}

/** ValidateObjectMetaUpdate: identity fields are immutable; no new finalizers once deleting. */
export function validateObjectMetaUpdate(next: JsonObject, old: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  for (const field of ['name', 'namespace', 'uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds']) {
    const value = next[field];
    if (!jsonEqual(value, old[field])) {
      const shown = typeof value === 'string' || typeof value === 'number' ? value : null;
      errors.push(invalid(`metadata.${field}`, shown, 'field is immutable'));
    }
  }
  if (old.deletionTimestamp !== undefined) {
    const before = new Set(Array.isArray(old.finalizers) ? old.finalizers : []);
    const added = (Array.isArray(next.finalizers) ? next.finalizers : []).filter((f) => !before.has(f));
    if (added.length > 0)
      errors.push(
        forbidden(
          'metadata.finalizers',
          `no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
        ),
      );
  }
  return errors;
}

export function metadataObject(object: JsonObject): JsonObject {
  if (!isJsonObject(object.metadata)) object.metadata = {};
  return object.metadata as JsonObject;
}

import type { FieldError } from '../field-errors.js';
import type { FieldSet } from '../field-set.js';
import type { JsonObject, JsonValue } from '../json.js';
import type { NameRule } from '../object-meta.js';
import type { ResourceType } from '../resource-types.js';
import type { Schema } from '../schema.js';

/** A value that does not decode into the kind's Go type; each verb words it its own way. */
export class DecodeError extends Error {}

export interface TableColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format?: string;
  description: string;
  /** 1 for the columns kubectl shows only with `-o wide`. */
  priority?: number;
}

/**
 * What the API server's registry does for one kind (pkg/registry/.../strategy.go, the versioned
 * defaulters and conversions, and the server-side printers), as far as the double implements it.
 */
export interface KindStrategy {
  type: ResourceType;
  schema: Schema;
  nameRule: NameRule;
  /** PUT of a missing object creates it (true for Leases only, here). */
  allowCreateOnUpdate: boolean;
  /** PUT without metadata.resourceVersion overwrites; otherwise it is rejected (Leases). */
  allowUnconditionalUpdate: boolean;
  /** Fields writes to the main resource cannot change, and that no manager owns: a workload's status. */
  resetFields?: FieldSet;
  /** Struct fields Go always writes (non-pointer structs), kept even when empty. */
  alwaysPresent: readonly string[];
  /** Conversion from the wire form to the stored one; throws DecodeError. */
  decode(object: JsonObject): void;
  /** The versioned defaulters. */
  applyDefaults(object: JsonObject): void;
  prepareForCreate(object: JsonObject): void;
  prepareForUpdate(object: JsonObject, old: JsonObject): void;
  validate(object: JsonObject): FieldError[];
  validateUpdate(object: JsonObject, old: JsonObject): FieldError[];
  /** Values of the fields a fieldSelector may name, besides metadata.name and metadata.namespace. */
  selectableFields?(object: JsonObject): Record<string, string>;
  /** A view's conversion of a stored object into its own form (see ResourceType.viewOf). */
  fromStorage?(stored: JsonObject): JsonObject;
  columns: readonly TableColumn[];
  /** `age` is the object's; `now` is for the printers that show other times (an Event's Last Seen). */
  cells(object: JsonObject, age: string, now: Date): JsonValue[];
}

export const NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';
export const AGE_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

export const nameColumn: TableColumn = { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION };
export const ageColumn: TableColumn = { name: 'Age', type: 'string', description: AGE_DESCRIPTION };

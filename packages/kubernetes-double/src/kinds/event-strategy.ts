import { parseMicroTime } from '../api-time.js';
import { isJsonObject, type JsonObject } from '../json.js';
import { isDns1123Subdomain } from '../name-rules.js';
import { findResourceType } from '../resource-types.js';
import { EVENT_SCHEMA } from '../schema.js';
import { coreEventFields, coreEventOf } from './core-event-form.js';
import { EVENT_COLUMNS, eventCells } from './event-printer.js';
import { validateEventCreate, validateEventUpdate } from './event-validation.js';
import { DecodeError, type KindStrategy } from './kind-strategy.js';
import { jsonType } from './secret-strategy.js';

const STRING_FIELDS = ['reportingController', 'reportingInstance', 'action', 'reason', 'note', 'type'];
const REFERENCE_FIELDS = ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'];

function decodeError(path: string, goType: string, value: unknown): DecodeError {
  return new DecodeError(`json: cannot unmarshal ${jsonType(value)} into Go struct field ${path} of type ${goType}`);
}

/** A MicroTime field, parsed and kept in the server's UTC form. */
function decodeMicroTime(object: JsonObject, field: string, path: string): void {
  const value = object[field];
  if (value === undefined || value === null) return;
  if (typeof value !== 'string') throw decodeError(path, 'string', value);
  const parsed = parseMicroTime(value);
  if ('error' in parsed) throw new DecodeError(parsed.error);
  object[field] = parsed.ok;
}

function decodeInt32(object: JsonObject, field: string, path: string): void {
  const value = object[field];
  if (value === undefined || value === null) return;
  if (typeof value !== 'number' || !Number.isInteger(value) || Math.abs(value) > 2 ** 31 - 1) throw decodeError(path, 'int32', value);
}

function decodeStrings(object: JsonObject, fields: readonly string[], owner: string): void {
  for (const field of fields) {
    const value = object[field];
    if (value !== undefined && value !== null && typeof value !== 'string') throw decodeError(`${owner}.${field}`, 'string', value);
  }
}

function decodeStruct(event: JsonObject, field: string, goType: string): JsonObject | undefined {
  const value = event[field];
  if (value === undefined || value === null) return undefined;
  if (!isJsonObject(value)) throw decodeError(`Event.${field}`, goType, value);
  return value;
}

/**
 * events.k8s.io/v1 Events (pkg/registry/core/event): eventTime and the series' lastObservedTime are
 * MicroTime, a PUT may create one and needs no resourceVersion, and the validation is the strict
 * one of the new API (see event-validation.ts). Stored in this form; core v1 is a view of it.
 */
export const eventStrategy: KindStrategy = {
  type: findResourceType('events.k8s.io', 'v1', 'events')!,
  schema: EVENT_SCHEMA,
  nameRule: isDns1123Subdomain,
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
  // Non-pointer structs: Go writes them even when empty.
  alwaysPresent: ['regarding', 'deprecatedSource'],

  decode(event) {
    decodeMicroTime(event, 'eventTime', 'Event.eventTime');
    decodeStrings(event, STRING_FIELDS, 'Event');
    decodeInt32(event, 'deprecatedCount', 'Event.deprecatedCount');
    const series = decodeStruct(event, 'series', 'v1.EventSeries');
    if (series) {
      decodeInt32(series, 'count', 'EventSeries.series.count');
      decodeMicroTime(series, 'lastObservedTime', 'EventSeries.series.lastObservedTime');
    }
    for (const field of ['regarding', 'related']) {
      const reference = decodeStruct(event, field, 'v1.ObjectReference');
      if (reference) decodeStrings(reference, REFERENCE_FIELDS, `ObjectReference.${field}`);
    }
    const source = decodeStruct(event, 'deprecatedSource', 'v1.EventSource');
    if (source) decodeStrings(source, ['component', 'host'], 'EventSource.deprecatedSource');
  },

  applyDefaults() {},
  prepareForCreate() {},
  prepareForUpdate() {},
  validate: validateEventCreate,
  validateUpdate: validateEventUpdate,
  selectableFields: (event) => {
    // The same set as the core view, under events.k8s.io's names (its field label conversion).
    const core = coreEventFields(coreEventOf(event));
    return Object.fromEntries(
      Object.entries(core)
        .filter(([key]) => key !== 'source' && key !== 'reportingComponent')
        .map(([key, value]) => [key.replace(/^involvedObject\./, 'regarding.'), value]),
    ) as Record<string, string>;
  },
  columns: EVENT_COLUMNS,
  cells: (event, _age, now) => eventCells(coreEventOf(event), now),
};

import { type FieldError, invalid, required } from '../field-errors.js';
import { isJsonObject, jsonEqual, type JsonObject, type JsonValue, metadataOf, stringAt } from '../json.js';
import { isDns1123Subdomain, isQualifiedName } from '../name-rules.js';
import { validateObjectMeta, validateObjectMetaUpdate } from '../object-meta.js';

/*
 * Kubernetes' pkg/apis/core/validation/events.go for Events written through events.k8s.io/v1:
 * the legacy checks every Event passes, then the strict ones of the new API. Field paths are the
 * internal type's (involvedObject, message, source...), as the real server reports them even to
 * an events.k8s.io client.
 */

const REPORTING_INSTANCE_LENGTH_LIMIT = 128;
const ACTION_LENGTH_LIMIT = 128;
const REASON_LENGTH_LIMIT = 128;
const NOTE_LENGTH_LIMIT = 1024;

const text = (event: JsonObject, field: string) => stringAt(event, field) ?? '';
const objectAt = (event: JsonObject, field: string): JsonObject => (isJsonObject(event[field]) ? event[field] : {});
const isSet = (value: JsonValue | undefined) => value !== undefined && value !== null && value !== '' && value !== 0;

/** legacyValidateEvent, for an Event with an eventTime (every events.k8s.io/v1 Event must have one). */
function legacyErrors(event: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  const namespace = stringAt(metadataOf(event), 'namespace') ?? '';
  const regardingNamespace = stringAt(objectAt(event, 'regarding'), 'namespace') ?? '';
  if (!isSet(event.eventTime)) {
    // An old-style Event: the namespaces must agree.
    const agrees = regardingNamespace === '' ? namespace === '' || namespace === 'default' : namespace === regardingNamespace;
    if (!agrees) errors.push(invalid('involvedObject.namespace', regardingNamespace, 'does not match event.namespace'));
  } else {
    if (regardingNamespace === '' && namespace !== 'default' && namespace !== 'kube-system')
      errors.push(invalid('involvedObject.namespace', regardingNamespace, 'does not match event.namespace'));
    const controller = text(event, 'reportingController');
    if (controller === '') errors.push(required('reportingController'));
    for (const message of isQualifiedName(controller)) errors.push(invalid('reportingController', controller, message));
    const instance = text(event, 'reportingInstance');
    if (instance === '') errors.push(required('reportingInstance'));
    if (instance.length > REPORTING_INSTANCE_LENGTH_LIMIT)
      errors.push(invalid('reportingInstance', '', `can have at most ${REPORTING_INSTANCE_LENGTH_LIMIT} characters`));
    const action = text(event, 'action');
    if (action === '') errors.push(required('action'));
    if (action.length > ACTION_LENGTH_LIMIT) errors.push(invalid('action', '', `can have at most ${ACTION_LENGTH_LIMIT} characters`));
    const reason = text(event, 'reason');
    if (reason === '') errors.push(required('reason'));
    if (reason.length > REASON_LENGTH_LIMIT) errors.push(invalid('reason', '', `can have at most ${REASON_LENGTH_LIMIT} characters`));
    if (text(event, 'note').length > NOTE_LENGTH_LIMIT)
      errors.push(invalid('message', '', `can have at most ${NOTE_LENGTH_LIMIT} characters`));
  }
  for (const message of isDns1123Subdomain(namespace)) errors.push(invalid('namespace', namespace, message));
  return errors;
}

/** validateV1EventSeries. */
function seriesErrors(event: JsonObject): FieldError[] {
  if (!isJsonObject(event.series)) return [];
  const errors: FieldError[] = [];
  const count = event.series.count;
  if (typeof count !== 'number' || count < 2) errors.push(invalid('series.count', '', 'should be at least 2'));
  if (!isSet(event.series.lastObservedTime)) errors.push(required('series.lastObservedTime'));
  return errors;
}

/** ValidateEventCreate for requestVersion events.k8s.io/v1. */
export function validateEventCreate(event: JsonObject): FieldError[] {
  const errors = [...legacyErrors(event), ...validateObjectMeta(metadataOf(event), true, isDns1123Subdomain), ...seriesErrors(event)];
  if (!isSet(event.eventTime)) errors.push(required('eventTime'));
  const type = text(event, 'type');
  if (type !== 'Normal' && type !== 'Warning') errors.push(invalid('type', '', `has invalid value: ${type}`));
  if (isSet(event.deprecatedFirstTimestamp)) errors.push(invalid('firstTimestamp', '', 'needs to be unset'));
  if (isSet(event.deprecatedLastTimestamp)) errors.push(invalid('lastTimestamp', '', 'needs to be unset'));
  if (isSet(event.deprecatedCount)) errors.push(invalid('count', '', 'needs to be unset'));
  const source = objectAt(event, 'deprecatedSource');
  if (isSet(source.component) || isSet(source.host)) errors.push(invalid('source', '', 'needs to be unset'));
  return errors;
}

/** The immutable fields, by their internal name (for the message) and their events.k8s.io/v1 one. */
const IMMUTABLE: ReadonlyArray<[internal: string, field: string]> = [
  ['involvedObject', 'regarding'],
  ['reason', 'reason'],
  ['message', 'note'],
  ['source', 'deprecatedSource'],
  ['firstTimestamp', 'deprecatedFirstTimestamp'],
  ['lastTimestamp', 'deprecatedLastTimestamp'],
  ['count', 'deprecatedCount'],
  ['type', 'type'],
  ['eventTime', 'eventTime'],
];

/** ValidateEventUpdate for requestVersion events.k8s.io/v1: only the series (and metadata) may change. */
export function validateEventUpdate(event: JsonObject, old: JsonObject): FieldError[] {
  const errors = [...legacyErrors(event), ...validateObjectMetaUpdate(metadataOf(event), metadataOf(old))];
  if (!jsonEqual(event.series, old.series)) errors.push(...seriesErrors(event));
  for (const [internal, field] of IMMUTABLE) {
    const value = event[field];
    if (jsonEqual(value ?? null, old[field] ?? null)) continue;
    const shown = typeof value === 'string' || typeof value === 'number' ? value : { go: goStruct(value) };
    errors.push(invalid(internal, shown, 'field is immutable'));
  }
  return errors;
}

/** Near enough to Go's %#v of a struct, for the immutable-field message. */
function goStruct(value: JsonValue | undefined): string {
  if (!isJsonObject(value)) return 'nil';
  return `{${Object.entries(value)
    .map(([k, v]) => `${k[0]!.toUpperCase()}${k.slice(1)}:${JSON.stringify(v)}`)
    .join(', ')}}`;
}

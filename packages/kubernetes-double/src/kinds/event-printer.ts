import { isJsonObject, type JsonObject, type JsonValue, metadataOf, stringAt } from '../json.js';
import { age } from '../table.js';
import { NAME_DESCRIPTION, type TableColumn } from './kind-strategy.js';

/*
 * The server-side printer of Events (pkg/printers/internalversion: printEvent), which serves both
 * views, since both are one internal type there. It reads the core v1 form; the events.k8s.io
 * view converts to it first.
 */

export const EVENT_COLUMNS: readonly TableColumn[] = [
  { name: 'Last Seen', type: 'string', description: 'The time at which the most recent occurrence of this event was recorded.' },
  { name: 'Type', type: 'string', description: 'Type of this event (Normal, Warning), new types could be added in the future' },
  {
    name: 'Reason',
    type: 'string',
    description:
      "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
  },
  { name: 'Object', type: 'string', description: 'The object that this event is about.' },
  {
    name: 'Subobject',
    type: 'string',
    priority: 1,
    description:
      'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2].',
  },
  {
    name: 'Source',
    type: 'string',
    priority: 1,
    description: 'The component reporting this event. Should be a short machine understandable string.',
  },
  { name: 'Message', type: 'string', description: 'A human-readable description of the status of this operation.' },
  {
    name: 'First Seen',
    type: 'string',
    priority: 1,
    description: 'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)',
  },
  { name: 'Count', type: 'string', priority: 1, description: 'The number of times this event has occurred.' },
  { name: 'Name', type: 'string', priority: 1, description: NAME_DESCRIPTION },
];

/** printEvent's cells (all of them: the server prints wide, kubectl hides priority 1 unless `-o wide`). */
export function eventCells(event: JsonObject, now: Date): JsonValue[] {
  const since = (time: JsonValue | undefined) => (typeof time === 'string' && time !== '' ? age(time, now) : '<unknown>');
  const first = typeof event.firstTimestamp === 'string' ? since(event.firstTimestamp) : since(event.eventTime);
  let last = typeof event.lastTimestamp === 'string' ? since(event.lastTimestamp) : first;
  let count = typeof event.count === 'number' ? event.count : 0;
  if (isJsonObject(event.series)) {
    last = since(event.series.lastObservedTime);
    count = typeof event.series.count === 'number' ? event.series.count : 0;
  } else if (count === 0) {
    count = 1; // a singleton of the new API has no count
  }
  const involved = isJsonObject(event.involvedObject) ? event.involvedObject : {};
  const kind = (stringAt(involved, 'kind') ?? '').toLowerCase();
  const name = stringAt(involved, 'name') ?? '';
  const source = isJsonObject(event.source) ? event.source : {};
  const component = stringAt(source, 'component') || stringAt(event, 'reportingComponent') || '';
  const instance = stringAt(source, 'host') || stringAt(event, 'reportingInstance') || '';
  return [
    last,
    stringAt(event, 'type') ?? '',
    stringAt(event, 'reason') ?? '',
    name ? `${kind}/${name}` : kind,
    stringAt(involved, 'fieldPath') ?? '',
    instance ? `${component}, ${instance}` : component,
    (stringAt(event, 'message') ?? '').trim(),
    first,
    count,
    stringAt(metadataOf(event), 'name') ?? '',
  ];
}

import { isJsonObject, type JsonObject, stringAt } from '../json.js';

/**
 * A stored events.k8s.io/v1 Event in its core v1 form. The real server keeps one internal Event
 * for both APIs; the double stores the events.k8s.io/v1 form and converts (regarding →
 * involvedObject, note → message, reportingController → reportingComponent, deprecatedSource,
 * -FirstTimestamp, -LastTimestamp, -Count → source, firstTimestamp, lastTimestamp, count).
 */
export function coreEventOf(stored: JsonObject): JsonObject {
  const present = (value: JsonObject[string] | undefined) => value !== undefined && value !== null;
  const out: JsonObject = {
    metadata: isJsonObject(stored.metadata) ? stored.metadata : {},
    involvedObject: isJsonObject(stored.regarding) ? stored.regarding : {},
  };
  if (present(stored.reason)) out.reason = stored.reason!;
  if (present(stored.note)) out.message = stored.note!;
  out.source = isJsonObject(stored.deprecatedSource) ? stored.deprecatedSource : {};
  // metav1.Time fields without omitempty: written as null when unset.
  out.firstTimestamp = stored.deprecatedFirstTimestamp ?? null;
  out.lastTimestamp = stored.deprecatedLastTimestamp ?? null;
  if (present(stored.deprecatedCount)) out.count = stored.deprecatedCount!;
  if (present(stored.type)) out.type = stored.type!;
  out.eventTime = stored.eventTime ?? null;
  if (present(stored.series)) out.series = stored.series!;
  if (present(stored.action)) out.action = stored.action!;
  if (present(stored.related)) out.related = stored.related!;
  out.reportingComponent = stringAt(stored, 'reportingController') ?? '';
  out.reportingInstance = stringAt(stored, 'reportingInstance') ?? '';
  return out;
}

/** The fields a fieldSelector may name (pkg/registry/core/event: ToSelectableFields). */
export function coreEventFields(event: JsonObject): Record<string, string> {
  const involved = isJsonObject(event.involvedObject) ? event.involvedObject : {};
  const source = isJsonObject(event.source) ? event.source : {};
  const at = (object: JsonObject, key: string) => stringAt(object, key) ?? '';
  return {
    'involvedObject.kind': at(involved, 'kind'),
    'involvedObject.namespace': at(involved, 'namespace'),
    'involvedObject.name': at(involved, 'name'),
    'involvedObject.uid': at(involved, 'uid'),
    'involvedObject.apiVersion': at(involved, 'apiVersion'),
    'involvedObject.resourceVersion': at(involved, 'resourceVersion'),
    'involvedObject.fieldPath': at(involved, 'fieldPath'),
    reason: at(event, 'reason'),
    reportingComponent: at(event, 'reportingComponent'),
    source: at(source, 'component') || at(event, 'reportingComponent'),
    type: at(event, 'type'),
  };
}

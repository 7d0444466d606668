import { type JsonObject, metadataOf, stringAt } from './json.js';
import type { KindStrategy } from './kinds/kind-strategy.js';

/** The Accept that makes kubectl's human-readable `get` ask for server-side columns. */
export function wantsTable(accept: string | undefined): boolean {
  return (accept ?? '')
    .split(',')
    .some((part) => /(^|;)\s*as=Table\b/.test(part) && /(^|;)\s*g=meta\.k8s\.io\b/.test(part) && /(^|;)\s*v=v1\b/.test(part));
}

export const TABLE_CONTENT_TYPE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

/**
 * A meta.k8s.io/v1 Table of `objects`, with the columns and cells of the API server's printers.
 * Rows carry the object's metadata (includeObject=Metadata, the default), the whole object
 * (Object) or nothing (None).
 */
export function toTable(
  strategy: KindStrategy,
  objects: JsonObject[],
  resourceVersion: string,
  includeObject: string | undefined,
  now: Date,
): JsonObject {
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { resourceVersion },
    columnDefinitions: strategy.columns.map((c) => ({
      name: c.name,
      type: c.type,
      format: c.format ?? '',
      description: c.description,
      priority: c.priority ?? 0,
    })),
    rows: objects.map((object) => ({
      cells: strategy.cells(object, age(stringAt(metadataOf(object), 'creationTimestamp'), now), now),
      ...(includeObject === 'None'
        ? {}
        : {
            object:
              includeObject === 'Object'
                ? object
                : { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: metadataOf(object) },
          }),
    })),
  };
}

/** duration.HumanDuration of the object's age, as kubectl's AGE column shows it. */
export function age(creationTimestamp: string | undefined, now: Date): string {
  if (!creationTimestamp) return '<unknown>';
  const ms = now.getTime() - Date.parse(creationTimestamp);
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  const days = Math.trunc(hours / 24);
  if (hours < 24 * 365 * 8) return days % 365 === 0 ? `${Math.trunc(days / 365)}y` : `${Math.trunc(days / 365)}y${days % 365}d`;
  return `${Math.trunc(days / 365)}y`;
}

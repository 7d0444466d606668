import { findResourceType, type ResourceType } from './resource-types.js';

/** What a URL path names, before the method is considered. */
export type ApiPath =
  | { kind: 'version' }
  | { kind: 'health' }
  | { kind: 'core-versions' }
  | { kind: 'group-list' }
  | { kind: 'group'; group: string }
  | { kind: 'resource-list'; group: string; version: string }
  | { kind: 'openapi-root' }
  | { kind: 'openapi-document'; group: string; version: string }
  | { kind: 'collection'; type: ResourceType; namespace?: string }
  | { kind: 'object'; type: ResourceType; namespace?: string; name: string }
  | { kind: 'unknown' };

/**
 * Parses `/api/v1/namespaces/{ns}/secrets/{name}` and the like. A namespaced kind's collection
 * without a namespace lists across all namespaces; subresources (`.../status`) are not served.
 */
export function parseApiPath(pathname: string): ApiPath {
  const segments = pathname
    .split('/')
    .filter((s) => s !== '')
    .map(decodeURIComponent);
  const [first, ...rest] = segments;
  if (pathname === '/version' || pathname === '/version/') return { kind: 'version' };
  if (['/healthz', '/livez', '/readyz'].includes(pathname)) return { kind: 'health' };
  if (first === 'openapi' && rest[0] === 'v3') {
    if (rest.length === 1) return { kind: 'openapi-root' };
    if (rest[1] === 'api' && rest.length === 3) return { kind: 'openapi-document', group: '', version: rest[2]! };
    if (rest[1] === 'apis' && rest.length === 4) return { kind: 'openapi-document', group: rest[2]!, version: rest[3]! };
    return { kind: 'unknown' };
  }
  let group: string;
  let version: string | undefined;
  let tail: string[];
  if (first === 'api') {
    if (rest.length === 0) return { kind: 'core-versions' };
    group = '';
    [version, ...tail] = rest;
  } else if (first === 'apis') {
    if (rest.length === 0) return { kind: 'group-list' };
    if (rest.length === 1) return { kind: 'group', group: rest[0]! };
    [group, version, ...tail] = rest as [string, string, ...string[]];
  } else {
    return { kind: 'unknown' };
  }
  if (tail.length === 0) return { kind: 'resource-list', group, version: version! };
  return resourcePath(group, version!, tail);
}

function resourcePath(group: string, version: string, tail: string[]): ApiPath {
  const namespaces = findResourceType('', 'v1', 'namespaces')!;
  if (tail[0] === 'namespaces' && tail.length >= 3) {
    const [, namespace, resource, name, ...more] = tail as [string, string, string, string | undefined, ...string[]];
    const type = findResourceType(group, version, resource);
    if (!type || !type.namespaced || more.length > 0) return { kind: 'unknown' };
    return name === undefined ? { kind: 'collection', type, namespace } : { kind: 'object', type, namespace, name };
  }
  const [resource, name, ...more] = tail as [string, string | undefined, ...string[]];
  const type = resource === 'namespaces' && group === '' && version === 'v1' ? namespaces : findResourceType(group, version, resource);
  if (!type || more.length > 0) return { kind: 'unknown' };
  if (name === undefined) return { kind: 'collection', type };
  // A namespaced kind has no cluster-wide object paths.
  return type.namespaced ? { kind: 'unknown' } : { kind: 'object', type, name };
}

import type { JsonObject } from './json.js';
import { apiGroups, RESOURCE_TYPES, type ResourceType } from './resource-types.js';

/*
 * Discovery, in both forms: the legacy documents (/api, /apis, /api/v1, /apis/{group}[/{version}])
 * and aggregated discovery (apidiscovery.k8s.io/v2, one document for /api and one for /apis),
 * which kubectl 1.32 asks for first and which saves it a request per group version.
 */

export const SERVER_VERSION = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.4',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2025-04-22T00:00:00Z',
  goVersion: 'go1.23.6',
  compiler: 'gc',
  platform: 'linux/amd64',
};

const AGGREGATED = /(^|;)\s*as=APIGroupDiscoveryList\b/;

/** The aggregated version the client accepts (v2 preferred), or undefined for the legacy form. */
export function aggregatedVersionAccepted(accept: string | undefined): 'v2' | 'v2beta1' | undefined {
  const accepted = (accept ?? '').split(',').filter((part) => AGGREGATED.test(part) && /(^|;)\s*g=apidiscovery\.k8s\.io\b/.test(part));
  if (accepted.some((part) => /(^|;)\s*v=v2\b(?!beta)/.test(part))) return 'v2';
  if (accepted.some((part) => /(^|;)\s*v=v2beta1\b/.test(part))) return 'v2beta1';
  return undefined;
}

export const aggregatedContentType = (version: 'v2' | 'v2beta1') =>
  `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList`;

function legacyResource(type: ResourceType): JsonObject {
  return {
    name: type.resource,
    singularName: type.singular,
    namespaced: type.namespaced,
    kind: type.kind,
    verbs: [...type.verbs],
    ...(type.shortNames ? { shortNames: [...type.shortNames] } : {}),
    ...(type.categories ? { categories: [...type.categories] } : {}),
  };
}

function aggregatedResource(type: ResourceType): JsonObject {
  return {
    resource: type.resource,
    responseKind: { group: type.group, version: type.version, kind: type.kind },
    scope: type.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: type.singular,
    verbs: [...type.verbs],
    ...(type.shortNames ? { shortNames: [...type.shortNames] } : {}),
    ...(type.categories ? { categories: [...type.categories] } : {}),
  };
}

const typesOf = (group: string, version: string) => RESOURCE_TYPES.filter((t) => t.group === group && t.version === version);

function groupDocument(name: string, versions: string[]): JsonObject {
  const list = versions.map((version) => ({ groupVersion: `${name}/${version}`, version }));
  return { name, versions: list, preferredVersion: list[0]! };
}

/** GET /api: the core group's versions; `serverAddress` is where clients reach the double. */
export function legacyCoreVersions(serverAddress: string): JsonObject {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

export function legacyGroupList(): JsonObject {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: apiGroups().map((g) => groupDocument(g.name, g.versions)) };
}

export function legacyGroup(name: string): JsonObject | undefined {
  const group = apiGroups().find((g) => g.name === name);
  return group ? { kind: 'APIGroup', apiVersion: 'v1', ...groupDocument(group.name, group.versions) } : undefined;
}

/** GET /api/v1 or /apis/{group}/{version}; the core list has no apiVersion, as the real one. */
export function legacyResourceList(group: string, version: string): JsonObject | undefined {
  const types = typesOf(group, version);
  if (types.length === 0) return undefined;
  return {
    kind: 'APIResourceList',
    ...(group ? { apiVersion: 'v1' } : {}),
    groupVersion: group ? `${group}/${version}` : version,
    resources: types.map(legacyResource),
  };
}

/** GET /api (core only) or /apis (every other group) in aggregated form. */
export function aggregatedDiscovery(core: boolean, version: 'v2' | 'v2beta1'): JsonObject {
  const groups = core ? [{ name: '', versions: ['v1'] }] : apiGroups();
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: `apidiscovery.k8s.io/${version}`,
    metadata: {},
    items: groups.map((g) => ({
      metadata: { ...(g.name ? { name: g.name } : {}), creationTimestamp: null },
      versions: g.versions.map((v) => ({ version: v, resources: typesOf(g.name, v).map(aggregatedResource), freshness: 'Current' })),
    })),
  };
}

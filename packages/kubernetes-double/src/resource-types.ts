import type { GroupResource } from './status-error.js';

/** A resource the double serves, described as discovery describes it. */
export interface ResourceType {
  /** '' for the core group. */
  group: string;
  version: string;
  /** The plural, as in URLs. */
  resource: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  /** Only the verbs the double implements (the real server also has watch and deletecollection). */
  verbs: readonly string[];
  shortNames?: readonly string[];
  categories?: readonly string[];
  /**
   * Another resource whose objects this one serves, converted (one storage, two views): core v1
   * `events` are the events.k8s.io/v1 Events seen through the older field names.
   */
  viewOf?: { group: string; resource: string };
}

const READ_WRITE = ['create', 'delete', 'get', 'list', 'patch', 'update'] as const;

/**
 * Short names and categories as the real registries declare them (pkg/registry/.../storage:
 * ShortNames() and Categories()); Secrets and Leases have neither.
 */
export const RESOURCE_TYPES: readonly ResourceType[] = [
  {
    group: '',
    version: 'v1',
    resource: 'namespaces',
    singular: 'namespace',
    kind: 'Namespace',
    namespaced: false,
    verbs: ['get', 'list'],
    shortNames: ['ns'],
  },
  { group: '', version: 'v1', resource: 'secrets', singular: 'secret', kind: 'Secret', namespaced: true, verbs: READ_WRITE },
  {
    group: '',
    version: 'v1',
    resource: 'events',
    singular: 'event',
    kind: 'Event',
    namespaced: true,
    // Read-only here: kubectl get, describe and events read this view; writes go to events.k8s.io.
    verbs: ['get', 'list'],
    shortNames: ['ev'],
    viewOf: { group: 'events.k8s.io', resource: 'events' },
  },
  {
    group: 'apps',
    version: 'v1',
    resource: 'daemonsets',
    singular: 'daemonset',
    kind: 'DaemonSet',
    namespaced: true,
    verbs: READ_WRITE,
    shortNames: ['ds'],
    categories: ['all'],
  },
  {
    group: 'apps',
    version: 'v1',
    resource: 'deployments',
    singular: 'deployment',
    kind: 'Deployment',
    namespaced: true,
    verbs: READ_WRITE,
    shortNames: ['deploy'],
    categories: ['all'],
  },
  {
    group: 'apps',
    version: 'v1',
    resource: 'statefulsets',
    singular: 'statefulset',
    kind: 'StatefulSet',
    namespaced: true,
    verbs: READ_WRITE,
    shortNames: ['sts'],
    categories: ['all'],
  },
  {
    group: 'coordination.k8s.io',
    version: 'v1',
    resource: 'leases',
    singular: 'lease',
    kind: 'Lease',
    namespaced: true,
    verbs: READ_WRITE,
  },
  {
    group: 'events.k8s.io',
    version: 'v1',
    resource: 'events',
    singular: 'event',
    kind: 'Event',
    namespaced: true,
    verbs: READ_WRITE,
    shortNames: ['ev'],
  },
];

export const apiVersionOf = (type: Pick<ResourceType, 'group' | 'version'>): string =>
  type.group ? `${type.group}/${type.version}` : type.version;

export const groupResourceOf = (type: ResourceType): GroupResource => ({ group: type.group, resource: type.resource });

export function findResourceType(group: string, version: string, resource: string): ResourceType | undefined {
  return RESOURCE_TYPES.find((t) => t.group === group && t.version === version && t.resource === resource);
}

/** The resource that stores objects of this name (for `events`, events.k8s.io's, not the core view). */
export function resourceTypeByName(resource: string): ResourceType | undefined {
  return RESOURCE_TYPES.find((t) => t.resource === resource && !t.viewOf);
}

export function resourceTypeOfKind(apiVersion: string, kind: string): ResourceType | undefined {
  return RESOURCE_TYPES.find((t) => apiVersionOf(t) === apiVersion && t.kind === kind && !t.viewOf);
}

/** The groups other than core, in the order /apis lists them. */
export function apiGroups(): Array<{ name: string; versions: string[] }> {
  const groups = new Map<string, Set<string>>();
  for (const type of RESOURCE_TYPES) {
    if (!type.group) continue;
    const versions = groups.get(type.group) ?? new Set<string>();
    versions.add(type.version);
    groups.set(type.group, versions);
  }
  return [...groups].map(([name, versions]) => ({ name, versions: [...versions] }));
}

import type { JsonValue } from './json.js';

/**
 * The part of the kinds' OpenAPI schema that server-side apply and strategic merge need: which
 * objects are structs (named fields) or maps (keyed entries), which are atomic, and how lists
 * merge (`x-kubernetes-list-type`, `-list-map-keys`, from the `+listType`/`+listMapKey` markers of
 * k8s.io/api). `fields` of an `open` struct are only the ones that need more than the default;
 * anything undeclared there is deduced from its value: an object is a struct, a list is atomic.
 */
export type Schema =
  | { type: 'scalar' }
  | { type: 'struct'; fields: Readonly<Record<string, Schema>>; open?: boolean; atomic?: boolean }
  | { type: 'map'; element: Schema; atomic?: boolean }
  | { type: 'list'; list: 'atomic' }
  | { type: 'list'; list: 'set' }
  | { type: 'list'; list: 'map'; keys: readonly string[]; keyDefaults?: Readonly<Record<string, JsonValue>>; element: Schema };

export const SCALAR: Schema = { type: 'scalar' };
const ATOMIC_LIST: Schema = { type: 'list', list: 'atomic' };
const SET: Schema = { type: 'list', list: 'set' };
const STRING_MAP: Schema = { type: 'map', element: SCALAR };
const OPEN: Schema = { type: 'struct', fields: {}, open: true };

/** A struct whose every field is listed: anything else is an unknown field. */
function closed(fields: Record<string, Schema>, names: string): Schema {
  const all: Record<string, Schema> = {};
  for (const name of names.split(' ')) all[name] = fields[name] ?? SCALAR;
  return { type: 'struct', fields: all };
}

const open = (fields: Record<string, Schema>): Schema => ({ type: 'struct', fields, open: true });
const listMap = (keys: string[], element: Schema = OPEN, keyDefaults?: Record<string, JsonValue>): Schema => ({
  type: 'list',
  list: 'map',
  keys,
  element,
  ...(keyDefaults ? { keyDefaults } : {}),
});
const atomicStruct: Schema = { type: 'struct', fields: {}, open: true, atomic: true };

export const OBJECT_META = closed(
  {
    labels: STRING_MAP,
    annotations: STRING_MAP,
    finalizers: SET,
    // OwnerReference is +structType=atomic; the list is keyed by uid.
    ownerReferences: listMap(['uid'], atomicStruct),
    managedFields: ATOMIC_LIST,
    creationTimestamp: SCALAR,
    deletionTimestamp: SCALAR,
  },
  'name generateName namespace selfLink uid resourceVersion generation creationTimestamp deletionTimestamp deletionGracePeriodSeconds labels annotations ownerReferences finalizers managedFields',
);

/** env[].valueFrom's selectors are atomic structs (+structType=atomic on their types). */
const ENV_VAR = open({
  valueFrom: open({ configMapKeyRef: atomicStruct, secretKeyRef: atomicStruct, fieldRef: atomicStruct, resourceFieldRef: atomicStruct }),
});

const CONTAINER = open({
  ports: listMap(['containerPort', 'protocol'], OPEN, { protocol: 'TCP' }),
  env: listMap(['name'], ENV_VAR),
  volumeMounts: listMap(['mountPath']),
  volumeDevices: listMap(['devicePath']),
  resources: open({ limits: STRING_MAP, requests: STRING_MAP, claims: listMap(['name']) }),
});

const POD_SPEC = open({
  containers: listMap(['name'], CONTAINER),
  initContainers: listMap(['name'], CONTAINER),
  ephemeralContainers: listMap(['name'], CONTAINER),
  volumes: listMap(['name']),
  imagePullSecrets: listMap(['name'], atomicStruct),
  hostAliases: listMap(['ip']),
  topologySpreadConstraints: listMap(['topologyKey', 'whenUnsatisfiable']),
  schedulingGates: listMap(['name']),
  resourceClaims: listMap(['name']),
  nodeSelector: { type: 'map', element: SCALAR, atomic: true },
  overhead: STRING_MAP,
});

const POD_TEMPLATE = closed({ metadata: OBJECT_META, spec: POD_SPEC }, 'metadata spec');

/** LabelSelector is +structType=atomic. */
const SELECTOR = atomicStruct;
const CONDITIONS = listMap(['type']);

const workloadStatus = open({ conditions: CONDITIONS });

export const SECRET_SCHEMA = closed(
  { metadata: OBJECT_META, data: STRING_MAP, stringData: STRING_MAP },
  'kind apiVersion metadata immutable data stringData type',
);

export const NAMESPACE_SCHEMA = closed(
  { metadata: OBJECT_META, spec: closed({ finalizers: ATOMIC_LIST }, 'finalizers'), status: open({ conditions: CONDITIONS }) },
  'kind apiVersion metadata spec status',
);

export const LEASE_SCHEMA = closed(
  {
    metadata: OBJECT_META,
    spec: closed({}, 'holderIdentity leaseDurationSeconds acquireTime renewTime leaseTransitions strategy preferredHolder'),
  },
  'kind apiVersion metadata spec',
);

export const DEPLOYMENT_SCHEMA = closed(
  {
    metadata: OBJECT_META,
    spec: closed(
      { selector: SELECTOR, template: POD_TEMPLATE, strategy: OPEN },
      'replicas selector template strategy minReadySeconds revisionHistoryLimit paused progressDeadlineSeconds',
    ),
    status: workloadStatus,
  },
  'kind apiVersion metadata spec status',
);

export const STATEFUL_SET_SCHEMA = closed(
  {
    metadata: OBJECT_META,
    spec: closed(
      {
        selector: SELECTOR,
        template: POD_TEMPLATE,
        volumeClaimTemplates: ATOMIC_LIST,
        updateStrategy: OPEN,
        persistentVolumeClaimRetentionPolicy: OPEN,
        ordinals: OPEN,
      },
      'replicas selector template volumeClaimTemplates serviceName podManagementPolicy updateStrategy revisionHistoryLimit minReadySeconds persistentVolumeClaimRetentionPolicy ordinals',
    ),
    status: workloadStatus,
  },
  'kind apiVersion metadata spec status',
);

export const DAEMON_SET_SCHEMA = closed(
  {
    metadata: OBJECT_META,
    spec: closed(
      { selector: SELECTOR, template: POD_TEMPLATE, updateStrategy: OPEN },
      'selector template updateStrategy minReadySeconds revisionHistoryLimit',
    ),
    status: workloadStatus,
  },
  'kind apiVersion metadata spec status',
);

/** ObjectReference (regarding, related) is a plain struct; EventSeries and EventSource too. */
const OBJECT_REFERENCE = closed({}, 'kind namespace name uid apiVersion resourceVersion fieldPath');

/** events.k8s.io/v1 Event, the form the double stores Events in (the core v1 view is converted from it). */
export const EVENT_SCHEMA = closed(
  {
    metadata: OBJECT_META,
    series: closed({}, 'count lastObservedTime'),
    regarding: OBJECT_REFERENCE,
    related: OBJECT_REFERENCE,
    deprecatedSource: closed({}, 'component host'),
  },
  'kind apiVersion metadata eventTime series reportingController reportingInstance action reason regarding related note type deprecatedSource deprecatedFirstTimestamp deprecatedLastTimestamp deprecatedCount',
);

/** core v1 Event: the same objects under their older field names (see kinds/core-event-view.ts). */
export const CORE_EVENT_SCHEMA = closed(
  {
    metadata: OBJECT_META,
    involvedObject: OBJECT_REFERENCE,
    source: closed({}, 'component host'),
    series: closed({}, 'count lastObservedTime'),
    related: OBJECT_REFERENCE,
  },
  'kind apiVersion metadata involvedObject reason message source firstTimestamp lastTimestamp count type eventTime series action related reportingComponent reportingInstance',
);

/** The schema of a value in a struct or map, deduced from the value where the schema says nothing. */
export function childSchema(parent: Schema, key: string, value: JsonValue | undefined): Schema {
  if (parent.type === 'map') return parent.element;
  if (parent.type === 'struct') return parent.fields[key] ?? deduce(value);
  return deduce(value);
}

export function elementSchema(list: Schema, value: JsonValue | undefined): Schema {
  return list.type === 'list' && list.list === 'map' ? list.element : deduce(value);
}

export function deduce(value: JsonValue | undefined): Schema {
  if (Array.isArray(value)) return ATOMIC_LIST;
  if (value !== null && typeof value === 'object') return OPEN;
  return SCALAR;
}

/** Whether `key` is a named field (as opposed to a map entry) of a struct. */
export function isNamedField(parent: Schema, key: string): boolean {
  return parent.type === 'struct' && (parent.open === true || key in parent.fields);
}

/** Does the value have the shape the schema describes? A mismatch is treated as a leaf. */
export function shapeMatches(schema: Schema, value: JsonValue | undefined): boolean {
  if (value === undefined || value === null) return true;
  if (schema.type === 'list') return Array.isArray(value);
  if (schema.type === 'struct' || schema.type === 'map') return typeof value === 'object' && !Array.isArray(value);
  return typeof value !== 'object';
}

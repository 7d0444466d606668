import { type FieldError, invalid, required } from '../field-errors.js';
import { FieldSet } from '../field-set.js';
import { isJsonObject, jsonEqual, type JsonObject, type JsonValue, metadataOf, stringAt, stringMapAt } from '../json.js';
import { isDns1123Label, isDns1123Subdomain } from '../name-rules.js';
import { type NameRule, validateObjectMeta, validateObjectMetaUpdate } from '../object-meta.js';
import { resourceTypeByName } from '../resource-types.js';
import { DAEMON_SET_SCHEMA, DEPLOYMENT_SCHEMA, type Schema, STATEFUL_SET_SCHEMA } from '../schema.js';
import { ageColumn, DecodeError, type KindStrategy, nameColumn, type TableColumn } from './kind-strategy.js';
import { goLabelSelector, goStringMap, selectorIsEmpty, selectorMatches, selectorString } from './label-selector-object.js';
import { containerCells, defaultPodTemplate, validatePodTemplate } from './pod-template.js';

/*
 * Deployments, StatefulSets and DaemonSets, with no controller behind them: the spec is stored and
 * served (spec.paused included), generation counts spec changes, status stays what it was (zero
 * unless seeded), as the main resource cannot write it.
 */

const STATUS_RESET = FieldSet.of([{ field: 'status' }]);
const DAEMON_SET_GENERATION = 'deprecated.daemonset.template.generation';

interface WorkloadOptions {
  resource: string;
  schema: Schema;
  nameRule: NameRule;
  defaults(spec: JsonObject): void;
  /** Deployments also count annotation changes (they are copied to ReplicaSets). */
  annotationsBumpGeneration: boolean;
  columns: TableColumn[];
  cells(object: JsonObject, spec: JsonObject, status: JsonObject, age: string): JsonValue[];
}

const specOf = (object: JsonObject): JsonObject => (isJsonObject(object.spec) ? object.spec : {});
const statusOf = (object: JsonObject): JsonObject => (isJsonObject(object.status) ? object.status : {});
const num = (object: JsonObject, key: string): number => (typeof object[key] === 'number' ? object[key] : 0);

function validateWorkload(object: JsonObject, options: WorkloadOptions): FieldError[] {
  const errors = validateObjectMeta(metadataOf(object), true, options.nameRule);
  const spec = specOf(object);
  const replicas = spec.replicas;
  if (typeof replicas === 'number' && replicas < 0) errors.push(invalid('spec.replicas', replicas, 'must be greater than or equal to 0'));
  const selector = spec.selector;
  if (!isJsonObject(selector)) errors.push(required('spec.selector'));
  else if (selectorIsEmpty(selector))
    errors.push(
      invalid('spec.selector', { go: goLabelSelector(selector) }, `empty selector is invalid for ${options.resource.replace(/s$/, '')}`),
    );
  const template = isJsonObject(spec.template) ? spec.template : undefined;
  if (template && isJsonObject(selector) && !selectorIsEmpty(selector)) {
    const labels = stringMapAt(isJsonObject(template.metadata) ? template.metadata : {}, 'labels');
    if (!selectorMatches(selector, labels)) {
      errors.push(invalid('spec.template.metadata.labels', { go: goStringMap(labels) }, '`selector` does not match template `labels`'));
    }
  }
  errors.push(...validatePodTemplate(template, 'spec.template'));
  return errors;
}

function workloadStrategy(options: WorkloadOptions): KindStrategy {
  return {
    type: resourceTypeByName(options.resource)!,
    schema: options.schema,
    nameRule: options.nameRule,
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
    resetFields: STATUS_RESET,
    alwaysPresent: ['spec', 'status'],

    decode(object) {
      const spec = object.spec;
      if (spec === undefined || spec === null) return;
      if (!isJsonObject(spec))
        throw new DecodeError(
          `json: cannot unmarshal ${typeof spec} into Go struct field ${kindOf(options)}.spec of type v1.${kindOf(options)}Spec`,
        );
      for (const field of ['replicas', 'minReadySeconds', 'revisionHistoryLimit', 'progressDeadlineSeconds']) {
        const value = spec[field];
        if (value !== undefined && value !== null && (typeof value !== 'number' || !Number.isInteger(value))) {
          throw new DecodeError(
            `json: cannot unmarshal ${typeof value} into Go struct field ${kindOf(options)}Spec.spec.${field} of type int32`,
          );
        }
      }
      if (spec.paused !== undefined && spec.paused !== null && typeof spec.paused !== 'boolean') {
        throw new DecodeError(`json: cannot unmarshal ${typeof spec.paused} into Go struct field DeploymentSpec.spec.paused of type bool`);
      }
    },

    applyDefaults(object) {
      const spec = isJsonObject(object.spec) ? object.spec : (object.spec = {});
      options.defaults(spec);
      if (isJsonObject(spec.template)) defaultPodTemplate(spec.template);
      if (!isJsonObject(object.status)) object.status = {};
    },

    prepareForCreate(object) {
      object.status = {};
      metadataOf(object).generation = 1;
      if (options.resource === 'daemonsets') setAnnotation(object, DAEMON_SET_GENERATION, '1');
    },

    prepareForUpdate(object, old) {
      object.status = isJsonObject(old.status) ? old.status : {};
      const oldMeta = metadataOf(old);
      const metadata = metadataOf(object);
      const generation = typeof oldMeta.generation === 'number' ? oldMeta.generation : 1;
      metadata.generation = generation;
      const specChanged = !jsonEqual(specOf(object), specOf(old));
      const annotationsChanged =
        options.annotationsBumpGeneration && !jsonEqual(stringMapAt(metadata, 'annotations'), stringMapAt(oldMeta, 'annotations'));
      if (specChanged || annotationsChanged) metadata.generation = generation + 1;
      if (options.resource === 'daemonsets') {
        const previous = Number(stringMapAt(oldMeta, 'annotations')[DAEMON_SET_GENERATION] ?? '1');
        const templateChanged = !jsonEqual(specOf(object).template, specOf(old).template);
        setAnnotation(object, DAEMON_SET_GENERATION, String(templateChanged ? previous + 1 : previous));
      }
    },

    validate: (object) => validateWorkload(object, options),

    validateUpdate(object, old) {
      const errors = validateObjectMetaUpdate(metadataOf(object), metadataOf(old));
      const selector = specOf(object).selector;
      if (!jsonEqual(selector, specOf(old).selector))
        errors.push(invalid('spec.selector', { go: goLabelSelector(selector) }, 'field is immutable'));
      return [...errors, ...validateWorkload(object, options)];
    },

    columns: options.columns,
    cells: (object, age) => options.cells(object, specOf(object), statusOf(object), age),
  };
}

function kindOf(options: WorkloadOptions): string {
  return resourceTypeByName(options.resource)!.kind;
}

function setAnnotation(object: JsonObject, key: string, value: string): void {
  const metadata = metadataOf(object);
  metadata.annotations = { ...stringMapAt(metadata, 'annotations'), [key]: value };
  object.metadata = metadata;
}

const CONTAINERS: TableColumn = {
  name: 'Containers',
  type: 'string',
  priority: 1,
  description: 'Names of each container in the template.',
};
const IMAGES: TableColumn = {
  name: 'Images',
  type: 'string',
  priority: 1,
  description: 'Images referenced by each container in the template.',
};
const nameOf = (object: JsonObject) => stringAt(metadataOf(object), 'name') ?? '';
const templateOf = (spec: JsonObject) => (isJsonObject(spec.template) ? spec.template : undefined);

export const deploymentStrategy = workloadStrategy({
  resource: 'deployments',
  schema: DEPLOYMENT_SCHEMA,
  nameRule: isDns1123Subdomain,
  annotationsBumpGeneration: true,
  defaults(spec) {
    spec.replicas ??= 1;
    const strategy = isJsonObject(spec.strategy) ? spec.strategy : (spec.strategy = {});
    strategy.type ??= 'RollingUpdate';
    if (strategy.type === 'RollingUpdate') {
      const rollingUpdate = isJsonObject(strategy.rollingUpdate) ? strategy.rollingUpdate : (strategy.rollingUpdate = {});
      rollingUpdate.maxUnavailable ??= '25%';
      rollingUpdate.maxSurge ??= '25%';
    }
    spec.revisionHistoryLimit ??= 10;
    spec.progressDeadlineSeconds ??= 600;
  },
  columns: [
    nameColumn,
    { name: 'Ready', type: 'string', description: 'Number of the pod with ready state' },
    {
      name: 'Up-to-date',
      type: 'integer',
      description: 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.',
    },
    {
      name: 'Available',
      type: 'integer',
      description: 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.',
    },
    ageColumn,
    CONTAINERS,
    IMAGES,
    {
      name: 'Selector',
      type: 'string',
      priority: 1,
      description:
        "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment. It must match the pod template's labels.",
    },
  ],
  cells: (object, spec, status, age) => [
    nameOf(object),
    `${num(status, 'readyReplicas')}/${num(spec, 'replicas')}`,
    num(status, 'updatedReplicas'),
    num(status, 'availableReplicas'),
    age,
    ...containerCells(templateOf(spec)),
    selectorString(spec.selector),
  ],
});

export const statefulSetStrategy = workloadStrategy({
  resource: 'statefulsets',
  schema: STATEFUL_SET_SCHEMA,
  nameRule: isDns1123Label,
  annotationsBumpGeneration: false,
  defaults(spec) {
    spec.podManagementPolicy ??= 'OrderedReady';
    const updateStrategy = isJsonObject(spec.updateStrategy) ? spec.updateStrategy : (spec.updateStrategy = {});
    if (updateStrategy.type === undefined) {
      updateStrategy.type = 'RollingUpdate';
      updateStrategy.rollingUpdate ??= {};
    }
    if (updateStrategy.type === 'RollingUpdate' && isJsonObject(updateStrategy.rollingUpdate)) updateStrategy.rollingUpdate.partition ??= 0;
    const retention = isJsonObject(spec.persistentVolumeClaimRetentionPolicy)
      ? spec.persistentVolumeClaimRetentionPolicy
      : (spec.persistentVolumeClaimRetentionPolicy = {});
    retention.whenDeleted ??= 'Retain';
    retention.whenScaled ??= 'Retain';
    spec.replicas ??= 1;
    spec.revisionHistoryLimit ??= 10;
  },
  columns: [
    nameColumn,
    { name: 'Ready', type: 'string', description: 'Number of the pod with ready state' },
    ageColumn,
    CONTAINERS,
    IMAGES,
  ],
  cells: (object, spec, status, age) => [
    nameOf(object),
    `${num(status, 'readyReplicas')}/${num(spec, 'replicas')}`,
    age,
    ...containerCells(templateOf(spec)),
  ],
});

export const daemonSetStrategy = workloadStrategy({
  resource: 'daemonsets',
  schema: DAEMON_SET_SCHEMA,
  nameRule: isDns1123Subdomain,
  annotationsBumpGeneration: false,
  defaults(spec) {
    const updateStrategy = isJsonObject(spec.updateStrategy) ? spec.updateStrategy : (spec.updateStrategy = {});
    updateStrategy.type ??= 'RollingUpdate';
    if (updateStrategy.type === 'RollingUpdate') {
      const rollingUpdate = isJsonObject(updateStrategy.rollingUpdate) ? updateStrategy.rollingUpdate : (updateStrategy.rollingUpdate = {});
      rollingUpdate.maxUnavailable ??= 1;
      rollingUpdate.maxSurge ??= 0;
    }
    spec.revisionHistoryLimit ??= 10;
  },
  columns: [
    nameColumn,
    {
      name: 'Desired',
      type: 'integer',
      description: 'The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod).',
    },
    {
      name: 'Current',
      type: 'integer',
      description: 'The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod.',
    },
    {
      name: 'Ready',
      type: 'integer',
      description: 'The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready.',
    },
    { name: 'Up-to-date', type: 'integer', description: 'The total number of nodes that are running updated daemon pod' },
    {
      name: 'Available',
      type: 'integer',
      description:
        'The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)',
    },
    { name: 'Node Selector', type: 'string', description: 'NodeSelector is a selector which must be true for the pod to fit on a node.' },
    ageColumn,
    CONTAINERS,
    IMAGES,
    { name: 'Selector', type: 'string', priority: 1, description: 'A label query over pods that are managed by the daemon set.' },
  ],
  cells: (object, spec, status, age) => {
    const template = templateOf(spec);
    const nodeSelector = stringMapAt(isJsonObject(template?.spec) ? template.spec : {}, 'nodeSelector');
    const formatted = Object.keys(nodeSelector)
      .sort()
      .map((k) => `${k}=${nodeSelector[k]}`)
      .join(',');
    return [
      nameOf(object),
      num(status, 'desiredNumberScheduled'),
      num(status, 'currentNumberScheduled'),
      num(status, 'numberReady'),
      num(status, 'updatedNumberScheduled'),
      num(status, 'numberAvailable'),
      formatted || '<none>',
      age,
      ...containerCells(template),
      selectorString(spec.selector),
    ];
  },
});

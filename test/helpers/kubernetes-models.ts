/**
 * Rendered Kubernetes objects checked against the kubernetes-models packages: each kind's model
 * `.validate()` (the OpenAPI schema of Kubernetes, or of the Prometheus Operator's CRDs), and a
 * strict check for fields the schema does not know.
 *
 * Why the strict check works this way: kubernetes-models ships its schemas only as ajv-compiled
 * validate functions (`_schemas/*.js`, no JSON Schema at run time), generated without
 * `additionalProperties: false`, so `.validate()` accepts a misspelt field (`imagePullPolcy`) that
 * the API server would drop. A compiled validator reads every property its schema declares
 * (`data.x !== undefined`) and enumerates the keys of map-typed objects (labels, ConfigMap data).
 * So the model's own validate runs on a Proxy of the object that records what it reads: a field of an
 * object the validator looked into that it never read is unknown. An object it never looks into at
 * all is free-form in the schema (none of the kinds here has one) and is not checked.
 */

interface TypeMeta {
  apiVersion: string;
  kind: string;
  metadata?: { name?: string; namespace?: string };
}
type ModelClass = { prototype: { validate(): void } };

/** Models of the CRDs the monitoring bundle uses, by API group; every other group is in kubernetes-models. */
const CRD_MODELS: Record<string, string> = {
  'monitoring.coreos.com': '@kubernetes-models/prometheus-operator',
};

/** `kind namespace/name` of an object, for messages. */
export const objectId = (object: TypeMeta) => `${object.kind} ${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;

/** The model class of an object's apiVersion and kind. */
export async function modelOf(object: TypeMeta): Promise<ModelClass> {
  const [group, version] = object.apiVersion.includes('/') ? object.apiVersion.split('/') : ['', object.apiVersion];
  const module =
    group && group in CRD_MODELS
      ? `${CRD_MODELS[group]}/${group}/${version}/${object.kind}`
      : `kubernetes-models/${group ? `${group}/` : ''}${version}/${object.kind}`;
  let exports: Record<string, unknown>;
  try {
    exports = (await import(module)) as Record<string, unknown>;
  } catch (error) {
    throw new Error(`no model for ${object.apiVersion} ${object.kind} (${module}): add its models package to CRD_MODELS`, { cause: error });
  }
  return exports[object.kind] as ModelClass;
}

/** What the validator did with one object of the tree. */
interface Visit {
  path: string;
  value: object;
  read: Set<string>;
  enumerated: boolean;
}

/** Wraps an object tree in Proxies that record every property read and key enumeration. */
function recording(value: unknown, path: string, visits: Visit[]): unknown {
  if (value === null || typeof value !== 'object') return value;
  const visit: Visit = { path, value, read: new Set(), enumerated: false };
  visits.push(visit);
  const children = new Map<string, unknown>();
  return new Proxy(value, {
    get(target, key, receiver) {
      if (typeof key !== 'string') return Reflect.get(target, key, receiver) as unknown;
      visit.read.add(key);
      if (!Object.hasOwn(target, key)) return Reflect.get(target, key, receiver) as unknown;
      if (!children.has(key)) children.set(key, recording((target as Record<string, unknown>)[key], `${path}.${key}`, visits));
      return children.get(key);
    },
    ownKeys(target) {
      visit.enumerated = true;
      return Reflect.ownKeys(target);
    },
  });
}

/** Every problem of a rendered object: the model's validation error, and each field its schema does not know. */
export async function modelProblems(object: TypeMeta): Promise<string[]> {
  const Model = await modelOf(object);
  const problems: string[] = [];
  const visits: Visit[] = [];
  try {
    Model.prototype.validate.call(recording(object, '', visits));
  } catch (error) {
    problems.push(`${objectId(object)}: ${(error as Error).message}`);
  }
  for (const { path, value, read, enumerated } of visits) {
    if (Array.isArray(value) || enumerated || read.size === 0) continue;
    for (const key of Object.keys(value))
      if (!read.has(key)) problems.push(`${objectId(object)}: unknown field ${path.slice(1) ? `${path.slice(1)}.` : ''}${key}`);
  }
  return problems;
}

import { createHash } from 'node:crypto';

import type { JsonObject } from './json.js';
import { PATCH_TYPES } from './patch-verb.js';
import { apiGroups, apiVersionOf, RESOURCE_TYPES, type ResourceType } from './resource-types.js';

/*
 * OpenAPI v3, as much as kubectl reads: `kubectl apply` (and create, with validation on) checks
 * in the group version's document that the kind's PATCH operation takes the `fieldValidation`
 * query parameter, and if so leaves validation to the server (fieldValidation=Strict) instead of
 * validating against schemas itself. So each document has the paths and operations with their
 * parameters and x-kubernetes-group-version-kind, and no component schemas: without a schema for
 * the kind, client-side apply computes its strategic merge patches from kubectl's compiled-in
 * types (its fallback), which are the real ones. `kubectl explain` needs the schemas and does not
 * work against the double.
 */

const queryParameter = (name: string, description: string, type = 'string') => ({
  name,
  in: 'query',
  description,
  schema: { type, uniqueItems: true },
});

const DRY_RUN = queryParameter('dryRun', 'When present, indicates that modifications should not be persisted.');
const FIELD_MANAGER = queryParameter(
  'fieldManager',
  'fieldManager is a name associated with the actor or entity that is making these changes.',
);
const FIELD_VALIDATION = queryParameter(
  'fieldValidation',
  'fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: Ignore, Warn (the default), Strict.',
);
const FORCE = queryParameter(
  'force',
  'Force is going to "force" Apply requests. It means user will re-acquire conflicting fields owned by other people.',
  'boolean',
);
const LABEL_SELECTOR = queryParameter(
  'labelSelector',
  'A selector to restrict the list of returned objects by their labels. Defaults to everything.',
);
const FIELD_SELECTOR = queryParameter(
  'fieldSelector',
  'A selector to restrict the list of returned objects by their fields. Defaults to everything.',
);
const LIMIT = queryParameter('limit', 'limit is a maximum number of responses to return for a list call.', 'integer');
const CONTINUE = queryParameter('continue', 'The continue option should be set when retrieving more results from the server.');
const PRETTY = queryParameter('pretty', "If 'true', then the output is pretty printed.");
const pathParameter = (name: string, description: string) => ({
  name,
  in: 'path',
  description,
  required: true,
  schema: { type: 'string', uniqueItems: true },
});

const OK = { '200': { description: 'OK' }, '401': { description: 'Unauthorized' } };

function operation(type: ResourceType, action: string, verb: string, parameters: JsonObject[], extra: JsonObject = {}): JsonObject {
  const kindName = type.kind;
  return {
    description: `${verb} ${type.resource}`,
    operationId: `${action}${type.namespaced ? 'Namespaced' : ''}${kindName}`,
    parameters,
    responses: OK,
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': { group: type.group, version: type.version, kind: kindName },
    ...extra,
  };
}

function pathsOf(type: ResourceType): Record<string, JsonObject> {
  const base = type.group ? `/apis/${type.group}/${type.version}` : `/api/${type.version}`;
  const collection = type.namespaced ? `${base}/namespaces/{namespace}/${type.resource}` : `${base}/${type.resource}`;
  const namespace = type.namespaced ? [pathParameter('namespace', 'object name and auth scope, such as for teams and projects')] : [];
  const writes = type.verbs.includes('create');
  const paths: Record<string, JsonObject> = {
    [collection]: {
      get: operation(type, 'list', 'list or watch objects of kind', [LABEL_SELECTOR, FIELD_SELECTOR, LIMIT, CONTINUE]),
      ...(writes ? { post: operation(type, 'post', 'create', [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION]) } : {}),
      parameters: [...namespace, PRETTY],
    },
    [`${collection}/{name}`]: {
      get: operation(type, 'get', 'read the specified', []),
      ...(writes
        ? {
            put: operation(type, 'put', 'replace the specified', [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION]),
            patch: operation(type, 'patch', 'partially update the specified', [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION, FORCE], {
              requestBody: {
                content: Object.fromEntries(
                  PATCH_TYPES.map((t) => [t, { schema: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch' } }]),
                ),
                required: true,
              },
            }),
            delete: operation(type, 'delete', 'delete', [DRY_RUN]),
          }
        : {}),
      parameters: [pathParameter('name', `name of the ${type.kind}`), ...namespace, PRETTY],
    },
  };
  return paths;
}

/** The document for one group version (`api/v1`, `apis/apps/v1`). */
export function groupVersionDocument(group: string, version: string): JsonObject | undefined {
  const types = RESOURCE_TYPES.filter((t) => t.group === group && t.version === version);
  if (types.length === 0) return undefined;
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: 'v1.32.4' },
    paths: Object.assign({}, ...types.map(pathsOf)) as JsonObject,
    components: {
      schemas: {
        'io.k8s.apimachinery.pkg.apis.meta.v1.Patch': {
          description: 'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.',
          type: 'object',
        },
      },
    },
  };
}

const hashOf = (document: JsonObject) => createHash('sha512').update(JSON.stringify(document)).digest('hex').toUpperCase();

/** GET /openapi/v3: where each group version's document is, with a hash clients cache by. */
export function openApiRoot(): JsonObject {
  const paths: JsonObject = {};
  const gvs = [{ group: '', version: 'v1' }, ...apiGroups().flatMap((g) => g.versions.map((version) => ({ group: g.name, version })))];
  for (const { group, version } of gvs) {
    const key = group ? `apis/${apiVersionOf({ group, version })}` : `api/${version}`;
    paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hashOf(groupVersionDocument(group, version)!)}` };
  }
  return { paths };
}

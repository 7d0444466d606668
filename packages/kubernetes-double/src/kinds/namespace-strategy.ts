import { isJsonObject, metadataOf, stringAt } from '../json.js';
import { isDns1123Label } from '../name-rules.js';
import { validateObjectMeta, validateObjectMetaUpdate } from '../object-meta.js';
import { resourceTypeByName } from '../resource-types.js';
import { NAMESPACE_SCHEMA } from '../schema.js';
import { ageColumn, type KindStrategy, nameColumn } from './kind-strategy.js';

/**
 * Namespaces are read-only through the double's API (get and list, for kubectl); they come from
 * the `namespaces` option or the objects seam, shaped as the API server makes them.
 */
export const namespaceStrategy: KindStrategy = {
  type: resourceTypeByName('namespaces')!,
  schema: NAMESPACE_SCHEMA,
  nameRule: isDns1123Label,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  alwaysPresent: ['spec', 'status'],
  decode() {},
  applyDefaults(namespace) {
    const name = stringAt(metadataOf(namespace), 'name');
    const metadata = metadataOf(namespace);
    // The NamespaceDefaultLabelName admission: every namespace is labelled with its name.
    if (name) metadata.labels = { ...(isJsonObject(metadata.labels) ? metadata.labels : {}), 'kubernetes.io/metadata.name': name };
    namespace.metadata = metadata;
    const spec = isJsonObject(namespace.spec) ? namespace.spec : {};
    spec.finalizers ??= ['kubernetes'];
    namespace.spec = spec;
    const status = isJsonObject(namespace.status) ? namespace.status : {};
    status.phase ??= 'Active';
    namespace.status = status;
  },
  prepareForCreate() {},
  prepareForUpdate() {},
  validate: (namespace) => validateObjectMeta(metadataOf(namespace), false, isDns1123Label),
  validateUpdate: (namespace, old) => validateObjectMetaUpdate(metadataOf(namespace), metadataOf(old)),
  selectableFields: (namespace) => ({ 'status.phase': isJsonObject(namespace.status) ? (stringAt(namespace.status, 'phase') ?? '') : '' }),
  columns: [nameColumn, { name: 'Status', type: 'string', description: 'The status of the namespace' }, ageColumn],
  cells: (namespace, age) => [
    stringAt(metadataOf(namespace), 'name') ?? '',
    isJsonObject(namespace.status) ? (stringAt(namespace.status, 'phase') ?? '') : '',
    age,
  ],
};

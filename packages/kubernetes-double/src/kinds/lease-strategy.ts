import { parseMicroTime } from '../api-time.js';
import { type FieldError, invalid } from '../field-errors.js';
import { isJsonObject, type JsonObject, metadataOf, stringAt } from '../json.js';
import { isDns1123Subdomain } from '../name-rules.js';
import { validateObjectMeta, validateObjectMetaUpdate } from '../object-meta.js';
import { resourceTypeByName } from '../resource-types.js';
import { LEASE_SCHEMA } from '../schema.js';
import { ageColumn, DecodeError, type KindStrategy, nameColumn } from './kind-strategy.js';
import { jsonType } from './secret-strategy.js';

function validateLeaseSpec(lease: JsonObject): FieldError[] {
  const spec = isJsonObject(lease.spec) ? lease.spec : {};
  const errors: FieldError[] = [];
  const duration = spec.leaseDurationSeconds;
  if (typeof duration === 'number' && duration <= 0) errors.push(invalid('spec.leaseDurationSeconds', duration, 'must be greater than 0'));
  const transitions = spec.leaseTransitions;
  if (typeof transitions === 'number' && transitions < 0)
    errors.push(invalid('spec.leaseTransitions', transitions, 'must be greater than or equal to 0'));
  return errors;
}

/**
 * Leases (coordination.k8s.io/v1): the times are MicroTime, the counts int32. A PUT may create one,
 * but an update must name the resourceVersion it replaces (AllowUnconditionalUpdate is false).
 */
export const leaseStrategy: KindStrategy = {
  type: resourceTypeByName('leases')!,
  schema: LEASE_SCHEMA,
  nameRule: isDns1123Subdomain,
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: false,
  alwaysPresent: ['spec'],

  decode(lease) {
    if (lease.spec === undefined || lease.spec === null) return;
    if (!isJsonObject(lease.spec))
      throw new DecodeError(`json: cannot unmarshal ${jsonType(lease.spec)} into Go struct field Lease.spec of type v1.LeaseSpec`);
    const spec = lease.spec;
    for (const field of ['acquireTime', 'renewTime']) {
      const value = spec[field];
      if (value === undefined || value === null) continue;
      if (typeof value !== 'string')
        throw new DecodeError(`json: cannot unmarshal ${jsonType(value)} into Go struct field LeaseSpec.spec.${field} of type string`);
      const parsed = parseMicroTime(value);
      if ('error' in parsed) throw new DecodeError(parsed.error);
      spec[field] = parsed.ok;
    }
    for (const field of ['leaseDurationSeconds', 'leaseTransitions']) {
      const value = spec[field];
      if (value === undefined || value === null) continue;
      if (typeof value !== 'number' || !Number.isInteger(value) || Math.abs(value) > 2 ** 31 - 1) {
        throw new DecodeError(`json: cannot unmarshal ${jsonType(value)} into Go struct field LeaseSpec.spec.${field} of type int32`);
      }
    }
    for (const field of ['holderIdentity', 'preferredHolder', 'strategy']) {
      const value = spec[field];
      if (value !== undefined && value !== null && typeof value !== 'string') {
        throw new DecodeError(`json: cannot unmarshal ${jsonType(value)} into Go struct field LeaseSpec.spec.${field} of type string`);
      }
    }
  },

  applyDefaults() {},
  prepareForCreate() {},
  prepareForUpdate() {},

  validate: (lease) => [...validateObjectMeta(metadataOf(lease), true, isDns1123Subdomain), ...validateLeaseSpec(lease)],
  validateUpdate: (lease, old) => [...validateObjectMetaUpdate(metadataOf(lease), metadataOf(old)), ...validateLeaseSpec(lease)],

  columns: [
    nameColumn,
    {
      name: 'Holder',
      type: 'string',
      description:
        'holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.',
    },
    ageColumn,
  ],
  cells: (lease, age) => [
    stringAt(metadataOf(lease), 'name') ?? '',
    isJsonObject(lease.spec) ? (stringAt(lease.spec, 'holderIdentity') ?? '') : '',
    age,
  ],
};

import { type FieldError, forbidden, invalid, required, tooLong } from '../field-errors.js';
import { goBase64ErrorOffset } from '../go-base64.js';
import { isJsonObject, jsonEqual, type JsonObject, metadataOf, stringAt } from '../json.js';
import { isConfigMapKey, isDns1123Subdomain } from '../name-rules.js';
import { validateObjectMeta, validateObjectMetaUpdate } from '../object-meta.js';
import { resourceTypeByName } from '../resource-types.js';
import { SECRET_SCHEMA } from '../schema.js';
import { ageColumn, DecodeError, type KindStrategy, nameColumn } from './kind-strategy.js';

const MAX_SECRET_SIZE = 1024 * 1024;

/** Keys each built-in Secret type requires (ValidateSecret). */
function validateSecretType(secret: JsonObject, data: JsonObject): FieldError[] {
  const has = (key: string) => key in data;
  const bytes = (key: string) => Buffer.from(typeof data[key] === 'string' ? data[key] : '', 'base64');
  const errors: FieldError[] = [];
  switch (stringAt(secret, 'type')) {
    case 'kubernetes.io/service-account-token': {
      const annotations = metadataOf(secret).annotations;
      const name = isJsonObject(annotations) ? annotations['kubernetes.io/service-account.name'] : undefined;
      if (typeof name !== 'string' || name === '') errors.push(required('metadata.annotations[kubernetes.io/service-account.name]'));
      break;
    }
    case 'kubernetes.io/dockercfg':
    case 'kubernetes.io/dockerconfigjson': {
      const key = stringAt(secret, 'type') === 'kubernetes.io/dockercfg' ? '.dockercfg' : '.dockerconfigjson';
      if (!has(key)) errors.push(required(`data[${key}]`));
      else {
        try {
          JSON.parse(bytes(key).toString('utf8'));
        } catch (error) {
          errors.push(invalid(`data[${key}]`, '<secret contents redacted>', (error as Error).message));
        }
      }
      break;
    }
    case 'kubernetes.io/basic-auth':
      if (!has('username') && !has('password')) errors.push(required('data[username]'), required('data[password]'));
      break;
    case 'kubernetes.io/ssh-auth':
      if (bytes('ssh-privatekey').length === 0) errors.push(required('data[ssh-privatekey]'));
      break;
    case 'kubernetes.io/tls':
      if (!has('tls.crt')) errors.push(required('data[tls.crt]'));
      if (!has('tls.key')) errors.push(required('data[tls.key]'));
      break;
    default:
      break;
  }
  return errors;
}

function validateSecret(secret: JsonObject): FieldError[] {
  const errors = validateObjectMeta(metadataOf(secret), true, isDns1123Subdomain);
  const data = isJsonObject(secret.data) ? secret.data : {};
  let size = 0;
  for (const [key, value] of Object.entries(data)) {
    for (const message of isConfigMapKey(key)) errors.push(invalid(`data[${key}]`, key, message));
    size += Buffer.from(typeof value === 'string' ? value : '', 'base64').length;
  }
  if (size > MAX_SECRET_SIZE) errors.push(tooLong('data', MAX_SECRET_SIZE));
  errors.push(...validateSecretType(secret, data));
  return errors;
}

/**
 * Secrets: `data` is bytes (base64 on the wire, checked as Go decodes it), `stringData` a write-only
 * convenience the v1 conversion folds into `data`, so it is never stored or returned; `type`
 * defaults to Opaque and cannot change; `immutable: true` freezes data.
 */
export const secretStrategy: KindStrategy = {
  type: resourceTypeByName('secrets')!,
  schema: SECRET_SCHEMA,
  nameRule: isDns1123Subdomain,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  alwaysPresent: [],

  decode(secret) {
    const data = secret.data;
    if (data !== undefined && data !== null) {
      if (!isJsonObject(data))
        throw new DecodeError(`json: cannot unmarshal ${jsonType(data)} into Go struct field Secret.data of type map[string][]uint8`);
      for (const [key, value] of Object.entries(data)) {
        if (value === null) {
          data[key] = '';
          continue;
        }
        if (typeof value !== 'string')
          throw new DecodeError(`json: cannot unmarshal ${jsonType(value)} into Go struct field Secret.data of type []uint8`);
        const offset = goBase64ErrorOffset(value);
        if (offset !== undefined) throw new DecodeError(`illegal base64 data at input byte ${offset}`);
        // Stored as the bytes, so served in canonical base64 whatever spelling came in.
        data[key] = Buffer.from(value.replace(/[\r\n]/g, ''), 'base64').toString('base64');
      }
    }
    const stringData = secret.stringData;
    if (stringData !== undefined && stringData !== null) {
      if (!isJsonObject(stringData))
        throw new DecodeError(
          `json: cannot unmarshal ${jsonType(stringData)} into Go struct field Secret.stringData of type map[string]string`,
        );
      const folded = isJsonObject(secret.data) ? secret.data : {};
      for (const [key, value] of Object.entries(stringData)) {
        if (typeof value !== 'string' && value !== null)
          throw new DecodeError(`json: cannot unmarshal ${jsonType(value)} into Go struct field Secret.stringData of type string`);
        folded[key] = Buffer.from(value ?? '', 'utf8').toString('base64');
      }
      secret.data = folded;
    }
    delete secret.stringData;
    if (secret.type !== undefined && secret.type !== null && typeof secret.type !== 'string') {
      throw new DecodeError(`json: cannot unmarshal ${jsonType(secret.type)} into Go struct field Secret.type of type v1.SecretType`);
    }
  },

  applyDefaults(secret) {
    if (!secret.type) secret.type = 'Opaque';
  },

  prepareForCreate() {},
  prepareForUpdate() {},

  validate: validateSecret,

  validateUpdate(secret, old) {
    const errors = validateObjectMetaUpdate(metadataOf(secret), metadataOf(old));
    if (secret.type !== old.type) errors.push(invalid('type', stringAt(secret, 'type') ?? '', 'field is immutable'));
    if (old.immutable === true) {
      if (secret.immutable !== true) errors.push(forbidden('immutable', 'field is immutable when `immutable` is set'));
      if (!jsonEqual(secret.data ?? {}, old.data ?? {})) errors.push(forbidden('data', 'field is immutable when `immutable` is set'));
    }
    errors.push(...validateSecret(secret));
    return errors;
  },

  selectableFields: (secret) => ({ type: stringAt(secret, 'type') ?? '' }),

  columns: [
    nameColumn,
    {
      name: 'Type',
      type: 'string',
      description:
        'Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types',
    },
    {
      name: 'Data',
      type: 'string',
      description:
        "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4",
    },
    ageColumn,
  ],
  cells: (secret, age) => [
    stringAt(metadataOf(secret), 'name') ?? '',
    stringAt(secret, 'type') ?? '',
    isJsonObject(secret.data) ? Object.keys(secret.data).length : 0,
    age,
  ],
};

export function jsonType(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'object' : typeof value;
}

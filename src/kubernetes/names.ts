import { createHash } from 'node:crypto';

/** RFC 1123 subdomain: what most object names must be (Secrets, Leases). */
export const OBJECT_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** RFC 1123 label: what a namespace name must be. */
export const NAMESPACE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** A label key: an optional DNS prefix and `/`, then a name of up to 63 characters. */
export const LABEL_KEY =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
export const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;
/** A Secret's data key. */
export const DATA_KEY = /^[-._a-zA-Z0-9]+$/;

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'token-rotator';

/**
 * An object name for a token name that is safe whatever the token name is: lowercased, anything
 * else turned into `-`, kept short, and a hash of the exact name appended so that `App_1` and
 * `app-1` never share an object. The exact name is kept in an annotation beside it.
 */
export function objectNameFor(prefix: string, tokenName: string): string {
  const readable = tokenName
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  const hash = createHash('sha256').update(tokenName, 'utf8').digest('hex').slice(0, 10);
  return `${prefix}-${readable ? `${readable}-` : ''}${hash}`;
}

/** Why `value` is not a namespace name, as the API server would refuse it; undefined when it is one. */
export function namespaceNameProblem(value: string): string | undefined {
  return value.length > 63 || !NAMESPACE_NAME.test(value)
    ? 'must be a namespace name: lowercase letters, digits and "-", at most 63'
    : undefined;
}

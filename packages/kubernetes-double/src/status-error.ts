import { aggregateText, causeType, errorBody, type FieldError } from './field-errors.js';
import type { JsonObject } from './json.js';

/** A `metav1.StatusCause`; Go names the cause type `reason` on the wire. */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
}

/** What a resource is called in messages and Status details: `secrets`, `leases.coordination.k8s.io`. */
export interface GroupResource {
  group: string;
  resource: string;
}

export const qualified = (gr: GroupResource): string => (gr.group ? `${gr.resource}.${gr.group}` : gr.resource);

/**
 * An API error, answered as a `Status` body with the code, reason and details the real API server
 * gives (k8s.io/apimachinery/pkg/api/errors): details are left out where it leaves them out.
 */
export class KubeStatusError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
  }

  toStatus(): JsonObject {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      // An unknown reason is empty, and Go leaves it out.
      ...(this.reason ? { reason: this.reason } : {}),
      ...(this.details ? { details: compactDetails(this.details) } : {}),
      code: this.code,
    };
  }
}

/** Go's omitempty: empty strings and lists are not written. */
function compactDetails(details: StatusDetails): JsonObject {
  const out: JsonObject = {};
  if (details.name) out.name = details.name;
  if (details.group) out.group = details.group;
  if (details.kind) out.kind = details.kind;
  if (details.uid) out.uid = details.uid;
  if (details.causes?.length) out.causes = details.causes.map((c) => ({ ...c }));
  return out;
}

const resourceDetails = (gr: GroupResource, name?: string): StatusDetails => ({ group: gr.group, kind: gr.resource, name });

export const notFound = (gr: GroupResource, name: string) =>
  new KubeStatusError(404, 'NotFound', `${qualified(gr)} ${JSON.stringify(name)} not found`, resourceDetails(gr, name));

export const alreadyExists = (gr: GroupResource, name: string) =>
  new KubeStatusError(409, 'AlreadyExists', `${qualified(gr)} ${JSON.stringify(name)} already exists`, resourceDetails(gr, name));

/** The text storage gives when a write's resourceVersion is not the stored one. */
export const OPTIMISTIC_LOCK_MESSAGE = 'the object has been modified; please apply your changes to the latest version and try again';

export const conflict = (gr: GroupResource, name: string, why: string) =>
  new KubeStatusError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualified(gr)} ${JSON.stringify(name)}: ${why}`,
    resourceDetails(gr, name),
  );

/** A server-side apply conflict: no name or kind in the details, one cause per conflicting field. */
export const applyConflict = (message: string, causes: StatusCause[]) => new KubeStatusError(409, 'Conflict', message, { causes });

/** `kind` is a Kind for most objects, but the storage layer puts the resource there (as Go does). */
export function invalid(gk: { group: string; kind: string }, name: string, errors: readonly FieldError[]): KubeStatusError {
  const what = gk.group ? `${gk.kind}.${gk.group}` : gk.kind;
  const message = errors.length
    ? `${what} ${JSON.stringify(name)} is invalid: ${aggregateText(errors)}`
    : `${what} ${JSON.stringify(name)} is invalid`;
  return new KubeStatusError(422, 'Invalid', message, {
    group: gk.group,
    kind: gk.kind,
    name,
    causes: errors.map((e) => ({ reason: causeType(e), message: errorBody(e), field: e.field })),
  });
}

export const badRequest = (message: string) => new KubeStatusError(400, 'BadRequest', message);

/** What the authentication filter answers; the same whether the token is missing or wrong. */
export const unauthorized = () => new KubeStatusError(401, 'Unauthorized', 'Unauthorized');

export const forbidden = (gr: GroupResource, name: string, why: string) =>
  new KubeStatusError(
    403,
    'Forbidden',
    name ? `${qualified(gr)} ${JSON.stringify(name)} is forbidden: ${why}` : `${qualified(gr)} is forbidden: ${why}`,
    resourceDetails(gr, name),
  );

/** go-restful's answer for a verb a path does not have, turned into a Status with empty details. */
export const methodNotAllowed = () =>
  new KubeStatusError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {});

/** A path nothing is registered at; the generic 404 has empty details. */
export const pathNotFound = () => new KubeStatusError(404, 'NotFound', 'the server could not find the requested resource', {});

export const unsupportedMediaType = (accepted: readonly string[]) =>
  new KubeStatusError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
  );

/** An error that is not a Status in the server: 500 with no reason, the error's text as message. */
export const unknownServerError = (message: string) => new KubeStatusError(500, '', message);

export const internalError = (why: string) =>
  new KubeStatusError(500, 'InternalError', `Internal error occurred: ${why}`, { causes: [{ message: why }] });

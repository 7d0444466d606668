import { Metadata, type ServiceError, status } from '@grpc/grpc-js';
import protobuf from 'protobufjs';

/*
 * A failed call as Google's front ends send it over gRPC: the status code and message in
 * grpc-status / grpc-message, and a google.rpc.Status with typed details (ErrorInfo, BadRequest)
 * in the `grpc-status-details-bin` trailer, which google-gax decodes into `reason`, `domain`,
 * `errorInfoMetadata` and `statusDetails`. The messages are those of google/rpc/status.proto and
 * google/rpc/error_details.proto, declared here as those files declare them.
 */
const root = protobuf.Root.fromJSON({
  nested: {
    google: {
      nested: {
        protobuf: { nested: { Any: { fields: { type_url: { type: 'string', id: 1 }, value: { type: 'bytes', id: 2 } } } } },
        rpc: {
          nested: {
            Status: {
              fields: {
                code: { type: 'int32', id: 1 },
                message: { type: 'string', id: 2 },
                details: { rule: 'repeated', type: 'google.protobuf.Any', id: 3 },
              },
            },
            ErrorInfo: {
              fields: {
                reason: { type: 'string', id: 1 },
                domain: { type: 'string', id: 2 },
                metadata: { keyType: 'string', type: 'string', id: 3 },
              },
            },
            BadRequest: {
              fields: { field_violations: { rule: 'repeated', type: 'FieldViolation', id: 1 } },
              nested: { FieldViolation: { fields: { field: { type: 'string', id: 1 }, description: { type: 'string', id: 2 } } } },
            },
          },
        },
      },
    },
  },
} as protobuf.INamespace as never);
const StatusType = root.lookupType('google.rpc.Status');
const ErrorInfoType = root.lookupType('google.rpc.ErrorInfo');
const BadRequestType = root.lookupType('google.rpc.BadRequest');

export type Detail =
  | { type: 'ErrorInfo'; reason: string; domain: string; metadata: Record<string, string> }
  | { type: 'BadRequest'; violations: { field: string; description: string }[] };

export class RpcError extends Error {
  constructor(
    readonly code: status,
    message: string,
    readonly details: Detail[] = [],
  ) {
    super(message);
  }

  toServiceError(): Partial<ServiceError> {
    const metadata = new Metadata();
    const any = this.details.map((detail) =>
      detail.type === 'ErrorInfo'
        ? {
            type_url: 'type.googleapis.com/google.rpc.ErrorInfo',
            value: ErrorInfoType.encode(
              ErrorInfoType.fromObject({ reason: detail.reason, domain: detail.domain, metadata: detail.metadata }),
            ).finish(),
          }
        : {
            type_url: 'type.googleapis.com/google.rpc.BadRequest',
            value: BadRequestType.encode(BadRequestType.fromObject({ field_violations: detail.violations })).finish(),
          },
    );
    const encoded = StatusType.encode(StatusType.fromObject({ code: this.code, message: this.message, details: any })).finish();
    metadata.set('grpc-status-details-bin', Buffer.from(encoded));
    return { code: this.code, details: this.message, metadata };
  }
}

export const invalid = (message: string, field?: string) =>
  new RpcError(status.INVALID_ARGUMENT, message, field ? [{ type: 'BadRequest', violations: [{ field, description: message }] }] : []);

export const notFound = (message: string) => new RpcError(status.NOT_FOUND, message);

export const failedPrecondition = (message: string) => new RpcError(status.FAILED_PRECONDITION, message);

/** How Secret Manager words a denial: the same for a missing resource, so that denial tells nothing of existence. */
export const permissionDenied = (permission: string, resource: string, domain = 'secretmanager.googleapis.com') =>
  new RpcError(status.PERMISSION_DENIED, `Permission '${permission}' denied for resource '${resource}' (or it may not exist).`, [
    { type: 'ErrorInfo', reason: 'IAM_PERMISSION_DENIED', domain, metadata: { permission, resource } },
  ]);

export const serviceDisabled = (service: string, title: string, projectNumber: string) =>
  new RpcError(
    status.PERMISSION_DENIED,
    `${title} has not been used in project ${projectNumber} before or it is disabled. Enable it by visiting ` +
      `https://console.developers.google.com/apis/api/${service}/overview?project=${projectNumber} then retry. ` +
      'If you enabled this API recently, wait a few minutes for the action to propagate to our systems and retry.',
    [
      {
        type: 'ErrorInfo',
        reason: 'SERVICE_DISABLED',
        domain: 'googleapis.com',
        metadata: {
          consumer: `projects/${projectNumber}`,
          service,
          serviceTitle: title,
          containerInfo: projectNumber,
          activationUrl: `https://console.developers.google.com/apis/api/${service}/overview?project=${projectNumber}`,
        },
      },
    ],
  );

export const unauthenticated = (reason: 'CREDENTIALS_MISSING' | 'ACCESS_TOKEN_TYPE_UNSUPPORTED' | 'ACCESS_TOKEN_EXPIRED', method: string) =>
  new RpcError(
    status.UNAUTHENTICATED,
    reason === 'CREDENTIALS_MISSING'
      ? "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."
      : 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. ' +
          'See https://developers.google.com/identity/sign-in/web/devconsole-project.',
    [{ type: 'ErrorInfo', reason, domain: 'googleapis.com', metadata: { service: 'secretmanager.googleapis.com', method } }],
  );

import { SinkError } from '../../errors.js';
import { remoteText } from '../../http/remote-text.js';

/**
 * AWS SDK errors carry the raw response (`$response`, with its headers and body) and metadata;
 * nothing of them may travel on. Each is rebuilt here: its name, HTTP status and request id, and
 * AWS's message masked like any peer's text, as a cause without anything else.
 */
export interface AwsFailure {
  /** The exception's name: `AccessDeniedException`, `ResourceNotFoundException`, `CredentialsProviderError`… */
  name: string;
  /** AWS's message, one line, token-shaped text masked. */
  message: string;
  status: number | undefined;
  requestId: string | undefined;
  /** A Node.js system error code (ECONNREFUSED, ETIMEDOUT) when the request never got an answer. */
  code: string | undefined;
}

export function awsFailure(error: unknown): AwsFailure {
  const e = (error ?? {}) as {
    name?: unknown;
    message?: unknown;
    code?: unknown;
    $metadata?: { httpStatusCode?: unknown; requestId?: unknown };
  };
  const status = e.$metadata?.httpStatusCode;
  const requestId = e.$metadata?.requestId;
  return {
    name: typeof e.name === 'string' ? e.name : 'Error',
    message: remoteText(typeof e.message === 'string' ? e.message : String(error)),
    status: typeof status === 'number' ? status : undefined,
    requestId: typeof requestId === 'string' && /^[A-Za-z0-9-]{1,100}$/.test(requestId) ? requestId : undefined,
    code: typeof e.code === 'string' && /^E[A-Z_]+$/.test(e.code) ? e.code : undefined,
  };
}

/** A clean stand-in for the SDK's error: its name and masked message only. */
export function causeOf(failure: AwsFailure): Error {
  const cause = new Error(failure.message);
  cause.name = failure.name;
  return cause;
}

/** `AccessDeniedException (HTTP 400, request 1234…)`: how AWS's answer is named in messages. */
export function answerOf(failure: AwsFailure): string {
  const parts = [failure.status ? `HTTP ${failure.status}` : undefined, failure.requestId ? `request ${failure.requestId}` : undefined]
    .filter(Boolean)
    .join(', ');
  return parts ? `${failure.name} (${parts})` : failure.name;
}

/** The name of the error the client's own guard throws for a plain-http endpoint off loopback. */
export const INSECURE_ENDPOINT = 'InsecureEndpointError';

const CREDENTIAL_ERRORS = new Set([
  'UnrecognizedClientException',
  'InvalidClientTokenId',
  'InvalidSignatureException',
  'IncompleteSignature',
  'MissingAuthenticationTokenException',
  'ExpiredTokenException',
  'ExpiredToken',
  'RequestExpired',
  'SignatureDoesNotMatch',
]);

const CHAIN =
  'in this order: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE and ~/.aws, ' +
  'IRSA (AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE), EKS Pod Identity or ECS (AWS_CONTAINER_CREDENTIALS_FULL_URI), instance metadata';

/**
 * What to tell a user about a failed call, with what they can do about it. `what` names the
 * destination and the step (`cannot write aws-secrets-manager prod/ingest`); `action` is the API
 * call; `resource` the ARN (when known) or the id it was called with.
 */
export function sinkErrorFrom(error: unknown, what: string, action: string, resource: string, kmsKeyId?: string): SinkError {
  const failure = awsFailure(error);
  const cause = causeOf(failure);
  const said = failure.message ? `: ${failure.message}` : '';
  switch (true) {
    case failure.name === 'AccessDeniedException': {
      // AWS names the action it checked, which may not be the call's (CreateSecret with tags needs TagResource).
      const denied = /\b((?:secretsmanager|kms):[A-Za-z]+)\b/.exec(failure.message)?.[1] ?? `secretsmanager:${action}`;
      return new SinkError(
        `${what}: AWS denied ${denied} on ${resource} (${answerOf(failure)}${said}); ` +
          `allow ${denied} on that ${denied.startsWith('kms:') ? 'key' : 'secret'} to the identity token-rotator runs as (see the IAM policy in docs/sinks/aws-secrets-manager.md)`,
        { cause },
      );
    }
    case failure.name === 'EncryptionFailure' || failure.name === 'DecryptionFailure': {
      const kms = failure.name === 'EncryptionFailure' ? 'kms:GenerateDataKey and kms:Decrypt' : 'kms:Decrypt';
      const key = kmsKeyId ? `the KMS key ${kmsKeyId}` : "the secret's KMS key";
      return new SinkError(
        `${what}: Secrets Manager could not use ${key} for secretsmanager:${action} (${answerOf(failure)}${said}); ` +
          `check that the key is enabled and that its key policy or IAM allows ${kms} to the identity token-rotator runs as`,
        { cause },
      );
    }
    case CREDENTIAL_ERRORS.has(failure.name):
      return new SinkError(
        `${what}: AWS refused the credentials for secretsmanager:${action} (${answerOf(failure)}${said}); ` +
          `check the credentials the AWS SDK found (it looks ${CHAIN}) and the clock of this machine`,
        { cause },
      );
    case failure.name === 'InvalidRequestException' && /delet/i.test(failure.message):
      return new SinkError(
        `${what}: the secret is scheduled for deletion (${answerOf(failure)}${said}); ` +
          `restore it (aws secretsmanager restore-secret --secret-id ${resource}) or point the sink at another secret`,
        { cause },
      );
    case failure.name === INSECURE_ENDPOINT:
      return new SinkError(`${what}: ${failure.message}`, { cause });
    case failure.name === 'CredentialsProviderError':
      return new SinkError(`${what}: no AWS credentials were found (${failure.message}); the AWS SDK looks ${CHAIN}`, { cause });
    case /region is missing/i.test(failure.message):
      return new SinkError(`${what}: no AWS region; set region on the sink, or AWS_REGION (or a region in the AWS profile)`, { cause });
    case failure.name === 'LimitExceededException':
      return new SinkError(
        `${what}: Secrets Manager refused secretsmanager:${action} for a quota (${answerOf(failure)}${said}); ` +
          'a secret keeps at most about 100 versions and all those of the last 24 hours: is something writing it in a loop?',
        { cause },
      );
    case failure.code !== undefined || failure.name === 'TimeoutError':
      return new SinkError(
        `${what}: cannot reach AWS Secrets Manager for secretsmanager:${action} (${failure.code ?? failure.name}${said}); ` +
          'check the network, the region, and AWS_ENDPOINT_URL_SECRETS_MANAGER / AWS_ENDPOINT_URL if you set one',
        { cause },
      );
    default:
      return new SinkError(`${what}: secretsmanager:${action} failed with ${answerOf(failure)}${said}`, { cause });
  }
}

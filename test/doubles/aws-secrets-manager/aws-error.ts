/**
 * An error as an AWS JSON 1.1 service answers it: HTTP status, and a body of `__type` and
 * `message` (the SDK reads the exception's name from `__type`, or from the x-amzn-ErrorType header).
 * Client errors are 400 unless AWS documents another status (CommonErrors: InvalidClientTokenId and
 * MissingAuthenticationToken are 403); server errors 500, ServiceUnavailable 503.
 */
export class AwsError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }

  body(): string {
    return JSON.stringify({ __type: this.type, message: this.message });
  }
}

export const notFound = () => new AwsError('ResourceNotFoundException', "Secrets Manager can't find the specified secret.");

export const markedForDeletion = () =>
  new AwsError('InvalidRequestException', "You can't perform this operation on the secret because it was marked for deletion.");

export const invalidParameter = (message: string) => new AwsError('InvalidParameterException', message);

/** What AWS says when a modelled constraint (a length, a pattern) is not met. */
export const validation = (member: string, constraint: string) =>
  new AwsError('ValidationException', `1 validation error detected: Value at '${member}' failed to satisfy constraint: ${constraint}`);

import type { CancelableRequest, GotReturn, HandlerFunction, Options } from 'got';

/**
 * Far above any legitimate answer (a token's metadata is about 1 KB), far below what hurts: a 13 MB
 * gzip body that inflates to 9 GB must end at this bound, not at the machine's memory.
 */
export const MAX_RESPONSE_BYTES = 1024 * 1024;

export class ResponseTooLargeError extends Error {
  readonly code = 'ERR_RESPONSE_TOO_LARGE';
  constructor(readonly limit: number) {
    super(`the answer is larger than ${Math.round(limit / 1024)} KiB (after decompression); refused`);
    this.name = 'ResponseTooLargeError';
  }
}

/**
 * A got handler that cancels a request as soon as its body, counted after decompression, passes
 * `limit` bytes, and rejects with ResponseTooLargeError. got counts `transferred` on the
 * decompressed stream, so a decompression bomb is stopped while it inflates.
 */
export function limitResponseSize(limit = MAX_RESPONSE_BYTES): HandlerFunction {
  return <T extends GotReturn>(options: Options, next: (options: Options) => T): T | Promise<T> => {
    if (options.isStream) return next(options);
    const request = next(options) as T & CancelableRequest;
    let exceeded = false;
    void request.on('downloadProgress', ({ transferred }: { transferred: number }) => {
      if (!exceeded && transferred > limit) {
        exceeded = true;
        request.cancel();
      }
    });
    return request.catch((error: unknown) => {
      throw exceeded ? new ResponseTooLargeError(limit) : error;
    }) as Promise<T>;
  };
}

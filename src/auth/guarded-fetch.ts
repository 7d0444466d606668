import { AuthError } from '../errors.js';
import type { Fetch } from '../http/got-fetch.js';
import { isRedirect } from '../http/redirect-policy.js';
import { MAX_RESPONSE_BYTES, ResponseTooLargeError } from '../http/response-size.js';

/**
 * The fetch openid-client uses to reach the authorization server. oauth4webapi already asks for
 * `redirect: 'manual'`; this enforces it whatever a library version does, names a redirect for
 * what it is (the client's credentials would follow it), and reads an answer only up to a bound,
 * counted after decompression, so a gzip bomb stops while it inflates. `base` is the run's HTTP stack
 * (`gotFetch`), which bounds the size as it reads; the bound here holds whatever `base` does.
 */
export function guardedFetch(where: string, base: Fetch, limit = MAX_RESPONSE_BYTES): Fetch {
  return async (url, options) => {
    const response = await base(url, { ...options, redirect: 'manual' }).catch((error: unknown) => {
      if (error instanceof ResponseTooLargeError) throw tooLarge(where, error.limit);
      throw error;
    });
    if (isRedirect(response.status)) {
      await response.body?.cancel().catch(() => undefined);
      throw new AuthError(
        `the authorization server at ${where} answered ${describeLocation(response, url)}; not followed: the client's credentials never leave its origin`,
      );
    }
    if (!response.body || response.status === 204 || response.status === 304) return response;
    const chunks: Uint8Array[] = [];
    let size = 0;
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge(where, limit);
      }
      chunks.push(value);
    }
    // The body is decoded already: the headers that described the encoded one no longer apply.
    const headers = new Headers(response.headers);
    headers.delete('content-encoding');
    headers.delete('content-length');
    const copy = new Response(Buffer.concat(chunks), { status: response.status, statusText: response.statusText, headers });
    // A constructed Response has no URL: the one asked is kept, for a message to name what failed.
    Object.defineProperty(copy, 'url', { value: response.url || url });
    return copy;
  };
}

function tooLarge(where: string, limit: number): AuthError {
  return new AuthError(`the authorization server at ${where}: ${new ResponseTooLargeError(limit).message}`);
}

/** `a redirect (302) to https://host:port`: the origin only, since a path or query may hold a secret. */
function describeLocation(response: Response, url: string): string {
  const location = response.headers.get('location');
  let origin = 'an unreadable location';
  try {
    if (location) origin = new URL(location, url).origin;
  } catch {
    // left as unreadable
  }
  return `a redirect (${response.status}) to ${origin}`;
}

import type { IncomingHttpHeaders } from 'node:http';

import type { Got } from 'got';

/** What openid-client (oauth4webapi's `CustomFetchOptions`) passes to a custom fetch. */
export interface FetchOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: unknown;
  signal?: AbortSignal | null;
  /** Never followed here whatever it says: a redirect is handed back as the answer. */
  redirect?: 'manual';
}

export type Fetch = (url: string, options: FetchOptions) => Promise<Response>;

/** Statuses whose answer has no body: the Response constructor refuses one. */
const NULL_BODY = new Set([101, 204, 205, 304]);

/**
 * A `fetch` for openid-client made of a got instance: the authorization server is reached over the
 * same agents, timeout and size bound as the token service, and Node's global `fetch` (undici,
 * with its WebAssembly parser) is never used. It only maps the call: no redirect is followed (the
 * caller decides what one means), no status is an error, nothing is sent again. The answer is a
 * global `Response` (oauth4webapi checks `instanceof Response`) holding the body already decoded
 * (without the headers that described the encoded body), and its `url` is the one asked.
 */
export function gotFetch(base: Got): Fetch {
  return async (url, options) => {
    const signal = options.signal ?? undefined;
    try {
      const response = await base(url, {
        method: (options.method ?? 'GET') as 'GET',
        headers: options.headers ?? {},
        ...requestBody(options.body),
        followRedirect: false,
        throwHttpErrors: false,
        retry: { limit: 0 },
        responseType: 'buffer',
        ...(signal ? { signal } : {}),
      });
      const status = response.statusCode;
      const answer = new Response(NULL_BODY.has(status) ? null : response.body, {
        status,
        statusText: response.statusMessage ?? '',
        headers: answerHeaders(response.headers),
      });
      Object.defineProperty(answer, 'url', { value: url });
      return answer;
    } catch (error) {
      // As fetch does: an aborted request rejects with the signal's reason (openid-client's timeout).
      if (signal?.aborted) throw signal.reason;
      throw error;
    }
  };
}

/** oauth4webapi sends a form (URLSearchParams) or nothing; bytes are passed as they are. */
function requestBody(body: unknown): { body?: string | Buffer } {
  if (body === undefined || body === null) return {};
  if (typeof body === 'string' || body instanceof URLSearchParams) return { body: String(body) };
  if (body instanceof Uint8Array) return { body: Buffer.from(body.buffer, body.byteOffset, body.byteLength) };
  if (body instanceof ArrayBuffer) return { body: Buffer.from(body) };
  throw new TypeError('a streamed request body is not supported');
}

/** got has decoded the body already, and dropped the content-encoding and content-length that described it. */
function answerHeaders(incoming: IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming)) for (const one of [value ?? []].flat()) headers.append(name, one);
  return headers;
}

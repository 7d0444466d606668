import type { PlainResponse } from 'got';

/**
 * A credential (the bearer, a client secret, a webhook's secret URL) must never leave the origin it
 * was configured for. got drops the Authorization header on a cross-origin redirect, but hooks that
 * add it put it back, and an https-to-http redirect on the same host keeps it: so the rule is ours.
 * Same-origin redirects are followed; anything else is answered as the redirect it is, an error.
 */
export function followSameOriginOnly(origin: URL | string): (response: PlainResponse) => boolean {
  const allowed = new URL(origin).origin;
  return (response) => {
    const target = redirectTarget(response);
    return target !== undefined && target.origin === allowed;
  };
}

/** Where a redirect points, resolved against the answering URL; undefined when absent or unreadable. */
export function redirectTarget(response: Pick<PlainResponse, 'headers' | 'url'>): URL | undefined {
  const location = response.headers.location;
  return location ? (URL.parse(location, response.url) ?? undefined) : undefined;
}

/** `https://host:port` of a redirect, never its path or query (they may carry a secret). */
export function describeRedirect(response: Pick<PlainResponse, 'headers' | 'url' | 'statusCode'>): string {
  const target = redirectTarget(response);
  return `a redirect (${response.statusCode}) to ${target ? target.origin : 'an unreadable location'}`;
}

export const isRedirect = (status: number) => status >= 300 && status < 400 && status !== 304;

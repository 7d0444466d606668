import { describe, expect, it } from 'vitest';

import { describeRedirect, followSameOriginOnly, isRedirect, redirectTarget } from '../../src/http/redirect-policy.js';

/**
 * A credential (the bearer, a webhook's secret URL) never leaves the origin it was configured for:
 * a redirect is followed only to that origin, and described without its path or query.
 */
const answer = (location: string | undefined, url = 'https://api.example.com/v1/tokens/abc', statusCode = 302) => ({
  headers: location === undefined ? {} : { location },
  url,
  statusCode,
});
type Answer = Parameters<ReturnType<typeof followSameOriginOnly>>[0];
const follows = (origin: string, location: string | undefined, url?: string) =>
  followSameOriginOnly(origin)(answer(location, url) as unknown as Answer);

describe('followSameOriginOnly', () => {
  it.each([
    ['a path on the same origin', '/v1/tokens/abc/'],
    ['a relative path', 'other'],
    ['the same origin spelled out', 'https://api.example.com/v2/tokens'],
    ['the same origin with its default port', 'https://api.example.com:443/v2/tokens'],
    ['the same origin in capitals', 'HTTPS://API.EXAMPLE.COM/v2'],
  ])('follows %s', (_what, location) => {
    expect(follows('https://api.example.com', location)).toBe(true);
  });

  it.each([
    ['another host', 'https://evil.example.net/collect'],
    ['a subdomain', 'https://eu.api.example.com/v1/tokens'],
    ['another port on the same host', 'https://api.example.com:8443/v1/tokens'],
    ['plain http on the same host', 'http://api.example.com/v1/tokens'],
    ['a protocol-relative location to another host', '//evil.example.net/collect'],
    ['no location at all', undefined],
    ['an empty location', ''],
    ['a location that is not a URL', 'http://[::1'],
  ])('does not follow %s', (_what, location) => {
    expect(follows('https://api.example.com', location)).toBe(false);
  });

  it('compares origins only, whatever path the configured address has', () => {
    expect(follows('https://api.example.com/v1/', 'https://api.example.com/elsewhere')).toBe(true);
    expect(follows('https://hooks.example.com/services/T0/B0/secret', 'https://hooks.example.com/other')).toBe(true);
  });

  it('takes a URL as well as a string', () => {
    expect(followSameOriginOnly(new URL('https://api.example.com/v1'))(answer('/x') as unknown as Answer)).toBe(true);
  });
});

describe('redirectTarget', () => {
  it('resolves a relative location against the URL that answered', () => {
    expect(redirectTarget(answer('../other?x=1'))?.href).toBe('https://api.example.com/v1/other?x=1');
  });

  it.each([
    ['no location', undefined],
    ['an empty one', ''],
    ['an unreadable one', 'http://[::1'],
  ])('is undefined for %s', (_what, location) => {
    expect(redirectTarget(answer(location))).toBeUndefined();
  });
});

describe('describeRedirect', () => {
  it('names the status and the origin, never the path or query, which may carry a secret', () => {
    const text = describeRedirect(answer('https://other.example.net:8443/collect/SECRET-PATH?token=SECRET-QUERY', undefined, 307));
    expect(text).toContain('307');
    expect(text).toContain('https://other.example.net:8443');
    expect(text).not.toMatch(/SECRET|collect/);
  });

  it('says when the location cannot be read, and gives none of it', () => {
    const text = describeRedirect(answer('http://[::1/SECRET-PATH', undefined, 301));
    expect(text).toContain('301');
    expect(text).toContain('unreadable');
    expect(text).not.toContain('SECRET');
  });
});

describe('isRedirect', () => {
  it.each([300, 301, 302, 303, 307, 308, 399])('%i is a redirect', (status) => {
    expect(isRedirect(status)).toBe(true);
  });

  it.each([200, 204, 299, 304, 400, 404, 500])('%i is not a redirect', (status) => {
    expect(isRedirect(status)).toBe(false);
  });
});

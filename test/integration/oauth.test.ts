import type { ServerResponse } from 'node:http';
import { createGzip } from 'node:zlib';

import { exportJWK, exportPKCS8, generateKeyPair } from 'jose';
import { type Emulator, startEmulator } from 'token-rotator-emulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { AuthSettings } from '../../src/auth/auth-settings.js';
import { oauthClientCredentials } from '../../src/auth/oauth-client-credentials.js';
import { fixedClock, systemClock } from '../../src/clock.js';
import { AuthError } from '../../src/errors.js';
import { Secret } from '../../src/secret.js';
import { expectNoLeak } from '../helpers/leaks.js';
import { startRecorder } from '../helpers/recorder.js';

type OAuth = Extract<AuthSettings, { kind: 'oauth' }>;
const BASIC_SECRET = 'canary-basic-client-secret-0300';
const POST_SECRET = 'canary-post-client-secret-0301';

describe('OAuth client credentials against oidc-provider', () => {
  let emulator: Emulator;
  let privatePem: string;

  beforeAll(async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    privatePem = await exportPKCS8(privateKey);
    emulator = await startEmulator({
      seed: {
        clients: [
          { clientId: 'basic', clientSecret: BASIC_SECRET },
          { clientId: 'post', clientSecret: POST_SECRET, authMethod: 'client_secret_post' },
          {
            clientId: 'jwt',
            authMethod: 'private_key_jwt',
            jwks: { keys: [{ ...(await exportJWK(publicKey)), alg: 'ES256', use: 'sig' }] },
          },
        ],
      },
    });
  });
  afterAll(async () => {
    await emulator.close();
  });

  const settings = (over: Partial<OAuth>): OAuth => ({
    kind: 'oauth',
    issuer: new URL(emulator.issuer),
    tokenUrl: undefined,
    clientId: 'basic',
    method: 'client_secret_basic',
    clientSecret: new Secret(BASIC_SECRET),
    privateKey: undefined,
    scope: undefined,
    resource: undefined,
    ...over,
  });

  /** The access token is a JWT for the API, as the emulator's resource server checks. */
  async function expectUsable(token: Secret) {
    const response = await fetch(`${emulator.apiUrl}/v2/tokens/nope`, { headers: { authorization: `Bearer ${token.reveal()}` } });
    expect(response.status).toBe(404); // authenticated, the token simply does not exist
  }

  it.each([
    ['client_secret_basic via discovery', {}],
    ['client_secret_post', { clientId: 'post', method: 'client_secret_post' as const, clientSecret: new Secret(POST_SECRET) }],
    ['a bare token endpoint', { issuer: undefined, tokenUrl: undefined as URL | undefined }],
  ])('gets a usable access token with %s', async (_how, over) => {
    const s = settings(over);
    if ('tokenUrl' in over) s.tokenUrl = new URL(emulator.tokenEndpoint);
    const source = oauthClientCredentials(s, { clock: systemClock, timeoutMs: 5000 });
    await expectUsable(await source.getAccessToken());
  });

  it('gets a usable access token with private_key_jwt from a PEM key', async () => {
    const source = oauthClientCredentials(
      settings({ clientId: 'jwt', method: 'private_key_jwt', clientSecret: undefined, privateKey: new Secret(privatePem) }),
      { clock: systemClock, timeoutMs: 5000 },
    );
    await expectUsable(await source.getAccessToken());
  });

  it('asks once for many concurrent callers, and caches until shortly before expiry', async () => {
    const clock = fixedClock(new Date());
    const source = oauthClientCredentials(settings({}), { clock, timeoutMs: 5000 });
    const tokens = await Promise.all([1, 2, 3, 4, 5].map(() => source.getAccessToken()));
    for (const t of tokens) expect(t.equals(tokens[0]!)).toBe(true);
    clock.advance(500_000); // 600 s lifetime, refreshed 60 s early
    expect((await source.getAccessToken()).equals(tokens[0]!)).toBe(true);
    clock.advance(50_000);
    expect((await source.getAccessToken()).equals(tokens[0]!)).toBe(false);
  });

  it('fetches a new token after invalidate', async () => {
    const source = oauthClientCredentials(settings({}), { clock: systemClock, timeoutMs: 5000 });
    const first = await source.getAccessToken();
    expect(source.invalidate(first)).toBe(true);
    expect((await source.getAccessToken()).equals(first)).toBe(false);
  });

  it('reports a refused client with the server words and without the secret', async () => {
    const wrong = 'canary-wrong-secret-0302';
    const source = oauthClientCredentials(settings({ clientSecret: new Secret(wrong) }), { clock: systemClock, timeoutMs: 5000 });
    const error = (await source.getAccessToken().catch((e: unknown) => e)) as AuthError;
    expect(error).toBeInstanceOf(AuthError);
    expect(error.message).toMatch(/refused the client: invalid_client/);
    expectNoLeak({ message: error.message, stack: String(error.stack) }, [wrong, BASIC_SECRET]);
  });

  it('names an issuer whose metadata names another issuer (a trailing slash) as a discovery failure every token shares', async () => {
    const issuer = `${emulator.issuer}/`;
    const error = (await oauthClientCredentials(settings({ issuer: new URL(issuer) }), { clock: systemClock, timeoutMs: 5000 })
      .getAccessToken()
      .catch((e: unknown) => e)) as AuthError;
    expect(error).toBeInstanceOf(AuthError);
    expect(error.message).toContain(
      `OAuth discovery at ${issuer}.well-known/openid-configuration answered HTTP 200 but for the issuer "${emulator.issuer}", not "${issuer}"`,
    );
    expect(error.dependencyFailure).toMatchObject({ dependency: 'authorization server', kind: 'discovery-failed' });
    expectNoLeak({ message: error.message }, [BASIC_SECRET]);
  });

  it('never calls the global fetch: the authorization server is reached through the got stack', async () => {
    const realFetch = globalThis.fetch;
    globalThis.fetch = () => Promise.reject(new Error('the global fetch was called'));
    let token: Secret;
    try {
      token = await oauthClientCredentials(settings({}), { clock: systemClock, timeoutMs: 5000 }).getAccessToken();
    } finally {
      globalThis.fetch = realFetch;
    }
    await expectUsable(token);
  });

  it('reports an unreachable authorization server', async () => {
    const source = oauthClientCredentials(settings({ issuer: new URL('http://127.0.0.1:9/oauth') }), {
      clock: systemClock,
      timeoutMs: 2000,
    });
    await expect(source.getAccessToken()).rejects.toThrow(/cannot reach the authorization server at http:\/\/127.0.0.1:9\/oauth/);
  });
});

/**
 * An authorization server that answers what it should not: the client's credentials never follow a
 * redirect to another origin, and an answer is read only up to a bound.
 */
describe('a misbehaving authorization server', () => {
  let elsewhere: Awaited<ReturnType<typeof startRecorder>>;
  let hostile: Awaited<ReturnType<typeof startRecorder>>;
  let answer: (res: ServerResponse) => void = (res) => res.writeHead(500).end();
  const SECRET = 'canary-redirected-client-secret-0400';

  beforeAll(async () => {
    elsewhere = await startRecorder((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    hostile = await startRecorder((_req, res) => answer(res));
  });
  afterAll(async () => {
    await elsewhere.close();
    await hostile.close();
  });

  const oauth = (over: Partial<OAuth>): OAuth => ({
    kind: 'oauth',
    issuer: undefined,
    tokenUrl: new URL(`${hostile.url}/token`),
    clientId: 'redirected',
    method: 'client_secret_post',
    clientSecret: new Secret(SECRET),
    privateKey: undefined,
    scope: undefined,
    resource: undefined,
    ...over,
  });

  it.each([302, 307, 308])('does not follow a %i from the token endpoint to another origin', async (status) => {
    elsewhere.calls.length = 0;
    answer = (res) => res.writeHead(status, { location: `${elsewhere.url}/token` }).end();
    const error = (await oauthClientCredentials(oauth({}), { clock: systemClock, timeoutMs: 3000 })
      .getAccessToken()
      .catch((e: unknown) => e)) as AuthError;
    expect(error).toBeInstanceOf(AuthError);
    expect(error.message).toMatch(new RegExp(`redirect \\(${status}\\) to ${elsewhere.url}`));
    expect(elsewhere.calls).toEqual([]);
    expectNoLeak({ message: error.message }, [SECRET]);
  });

  it('does not follow discovery to another origin', async () => {
    elsewhere.calls.length = 0;
    answer = (res) => res.writeHead(302, { location: `${elsewhere.url}/.well-known/openid-configuration` }).end();
    const source = oauthClientCredentials(oauth({ issuer: new URL(`${hostile.url}/issuer`), tokenUrl: undefined }), {
      clock: systemClock,
      timeoutMs: 3000,
    });
    await expect(source.getAccessToken()).rejects.toThrow(/redirect \(302\)/);
    expect(elsewhere.calls).toEqual([]);
  });

  it('names a token endpoint failing with an OAuth error body (503 temporarily_unavailable) as the server failing, not refusing the client', async () => {
    answer = (res) => res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'temporarily_unavailable' }));
    const error = (await oauthClientCredentials(oauth({}), { clock: systemClock, timeoutMs: 3000 })
      .getAccessToken()
      .catch((e: unknown) => e)) as AuthError;
    expect(error.message).toMatch(
      new RegExp(`^the OAuth token endpoint ${hostile.url}/token answered HTTP 503; check ROTATOR_OAUTH_TOKEN_URL$`),
    );
    expect(error.dependencyFailure).toMatchObject({ kind: 'token-endpoint-failed', target: hostile.url });
    expectNoLeak({ message: error.message }, [SECRET]);
  });

  it('names a discovery answered by a web page, not metadata', async () => {
    answer = (res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>a web site</html>');
    const source = oauthClientCredentials(oauth({ issuer: new URL(`${hostile.url}/site`), tokenUrl: undefined }), {
      clock: systemClock,
      timeoutMs: 3000,
    });
    const error = (await source.getAccessToken().catch((e: unknown) => e)) as AuthError;
    expect(error.message).toMatch(
      new RegExp(
        `^OAuth discovery at ${hostile.url}/site/\\.well-known/openid-configuration answered HTTP 200 but not with discovery metadata`,
      ),
    );
    expect(error.dependencyFailure?.kind).toBe('discovery-failed');
  });

  it('cuts off a token answer that inflates past the bound', async () => {
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      const gzip = createGzip();
      gzip.pipe(res);
      const zeros = Buffer.alloc(1 << 20, 0x20);
      let left = 64;
      const pump = () => {
        while (left > 0 && !res.destroyed) {
          left -= 1;
          if (!gzip.write(zeros)) return void gzip.once('drain', pump);
        }
        gzip.end();
      };
      pump();
    };
    const source = oauthClientCredentials(oauth({}), { clock: systemClock, timeoutMs: 10_000 });
    await expect(source.getAccessToken()).rejects.toThrow(/larger than/);
  });
});

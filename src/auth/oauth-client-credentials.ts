import type { Got } from 'got';
import * as oidc from 'openid-client';

import type { Clock } from '../clock.js';
import { isLoopbackHost } from '../common/loopback.js';
import { dependencyCheck, describeFailureKind } from '../error-advice.js';
import { networkFailureKind, originOf } from '../error-helpers.js';
import { AuthError, type DependencyFailureKind } from '../errors.js';
import { gotFetch } from '../http/got-fetch.js';
import { createHttpStack } from '../http/http-stack.js';
import { remoteText } from '../http/remote-text.js';
import { scrubSecrets, Secret } from '../secret.js';
import type { AccessTokenSource } from './access-token-source.js';
import type { AuthSettings } from './auth-settings.js';
import { guardedFetch } from './guarded-fetch.js';
import { importClientPrivateKey } from './private-key.js';

type OAuthSettings = Extract<AuthSettings, { kind: 'oauth' }>;

/** Refresh this long before expiry, or a tenth of the lifetime for short-lived tokens. */
const REFRESH_MARGIN_MS = 60_000;
/** A token response without `expires_in` is used for this long. */
const UNKNOWN_LIFETIME_MS = 5 * 60_000;

async function clientAuthentication(settings: OAuthSettings): Promise<oidc.ClientAuth> {
  switch (settings.method) {
    case 'client_secret_basic':
      return oidc.ClientSecretBasic(settings.clientSecret!.reveal());
    case 'client_secret_post':
      return oidc.ClientSecretPost(settings.clientSecret!.reveal());
    case 'private_key_jwt':
      return oidc.PrivateKeyJwt(await importClientPrivateKey(settings.privateKey!));
  }
}

/** Errors of RFC 6749 §5.2 that mean the client's own credentials are wrong or not allowed. */
const CLIENT_REFUSALS = new Set(['invalid_client', 'unauthorized_client', 'unsupported_grant_type']);

function refused(where: string, code: string, description: string | undefined): AuthError {
  const detail = description ? ` (${remoteText(description)})` : '';
  const message = `the authorization server at ${where} refused the client: ${code}${detail}`;
  if (!CLIENT_REFUSALS.has(code)) return new AuthError(message);
  const dependencyFailure = shared(where, 'client-refused');
  return new AuthError(`${message}; ${dependencyFailure.check}`, { dependencyFailure });
}

function shared(where: string, kind: DependencyFailureKind) {
  return {
    dependency: 'authorization server' as const,
    kind,
    target: originOf(where),
    check: dependencyCheck('authorization server', kind),
  };
}

/** The first system error code down a chain of causes: fetch wraps the socket's error, openid-client wraps fetch's. */
function systemCode(error: unknown): string | undefined {
  for (let e = error as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && networkFailureKind(e.code)) return e.code;
  }
  return undefined;
}

function isTimeout(error: unknown): boolean {
  for (let e = error as { name?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (e.name === 'TimeoutError') return true;
  }
  return false;
}

/** oauth4webapi's code for metadata naming another issuer (openid-client does not export the constant). */
const ISSUER_MISMATCH = 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED';

/** Which request failed: discovery (the issuer's metadata) or the token request. */
type Step = 'discovery' | 'token';

/** The variable that led to the authorization server: the issuer's, or the bare token endpoint's. */
type Variable = 'ROTATOR_OAUTH_ISSUER' | 'ROTATOR_OAUTH_TOKEN_URL';

/**
 * An HTTP error that is no refusal of the client (a 404 from a wrong issuer or token URL, a 5xx):
 * the same for every token, so said once, with the URL asked (its query left out: it may hold
 * something private), the status, and the variable that led there; the check says more.
 */
function failedStep(where: string, variable: Variable, step: Step, url: string, status: number, how?: string): AuthError {
  const dependencyFailure = shared(where, step === 'discovery' ? 'discovery-failed' : 'token-endpoint-failed');
  const what = step === 'discovery' ? 'OAuth discovery at' : 'the OAuth token endpoint';
  const answer = `answered HTTP ${status}${how ? ` ${how}` : ''}`;
  return new AuthError(`${what} ${withoutQuery(url, where)} ${answer}; check ${variable}`, { dependencyFailure });
}

/** Where openid-client looks for an issuer's metadata: the well-known path after the issuer's own. */
function discoveryUrl(issuer: string): string {
  const url = new URL(issuer);
  return `${url.origin}${url.pathname.replace(/\/$/, '')}/.well-known/openid-configuration`;
}

function withoutQuery(url: string, fallback: string): string {
  try {
    const parsed = new URL(url || fallback);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return originOf(fallback);
  }
}

/** Turns openid-client's errors into ours: what the server said, never what we sent. */
function translate(error: unknown, where: string, variable: Variable, step: Step): AuthError {
  if (error instanceof AuthError) return error;
  // openid-client wraps what its fetch throws ("something went wrong"): our own refusal is the cause.
  if ((error as { cause?: unknown })?.cause instanceof AuthError) return (error as { cause: AuthError }).cause;
  if (error instanceof oidc.ResponseBodyError) {
    // A 5xx with an OAuth error body (`server_error`) is the server failing, not refusing the client.
    if (error.status >= 500 && !CLIENT_REFUSALS.has(error.error))
      return failedStep(where, variable, step, error.response.url, error.status);
    return refused(where, error.error, error.error_description);
  }
  // openid-client answers a status it did not expect (discovery's 404, a token endpoint's 500 page)
  // with the response itself as the cause; at discovery, a 200 that is no metadata (a web site's
  // page) too.
  const cause = (error as { cause?: unknown })?.cause;
  if (cause instanceof Response && (!cause.ok || step === 'discovery')) {
    return failedStep(where, variable, step, cause.url, cause.status, cause.ok ? 'but not with discovery metadata (JSON)' : undefined);
  }
  if (step === 'discovery' && (error as { code?: unknown })?.code === ISSUER_MISMATCH) {
    // The metadata names another issuer: most often a trailing slash, or a tenant path, that differs.
    const named = (cause as { body?: { issuer?: unknown } } | undefined)?.body?.issuer;
    const issuer = typeof named === 'string' ? JSON.stringify(remoteText(named)) : 'another issuer';
    return failedStep(
      where,
      variable,
      step,
      discoveryUrl(where),
      200,
      `but for the issuer ${issuer}, not ${JSON.stringify(withoutQuery(where, where))}`,
    );
  }
  if (error instanceof oidc.WWWAuthenticateChallengeError) {
    // A 401 answers with the error in a WWW-Authenticate challenge instead of the body.
    const parameters = error.cause[0]?.parameters;
    return refused(where, parameters?.error ?? `HTTP ${error.status}`, parameters?.error_description);
  }
  const e = error as Error & { code?: string; cause?: { code?: string } };
  const code = systemCode(error);
  const kind = code ? networkFailureKind(code) : isTimeout(error) ? 'timeout' : undefined;
  if (kind) {
    return new AuthError(`cannot reach the authorization server at ${where}: ${describeFailureKind(kind, code)}`, {
      dependencyFailure: shared(where, kind),
    });
  }
  if (e instanceof TypeError) {
    return new AuthError(`cannot reach the authorization server at ${where}${e.cause?.code ? ` (${e.cause.code})` : ''}`);
  }
  return new AuthError(`OAuth client credentials at ${where} failed: ${scrubSecrets(e.message ?? String(error))}`);
}

/**
 * OAuth 2.0 client credentials with openid-client: discovery from the issuer, or a bare token
 * endpoint. The access token is cached until shortly before it expires, and concurrent callers share
 * one request. Requests go through `http`, the run's HTTP stack shared with the token service (its
 * own when not given), never through the global `fetch`.
 */
export function oauthClientCredentials(
  settings: OAuthSettings,
  options: { clock: Clock; timeoutMs: number; http?: Got | undefined },
): AccessTokenSource {
  // Every message, and the Events and logs they reach, names the server without the URL's query or
  // user info: either may hold something private.
  const href = (settings.issuer ?? settings.tokenUrl)!.href;
  const where = withoutQuery(href, href);
  const variable: Variable = settings.issuer ? 'ROTATOR_OAUTH_ISSUER' : 'ROTATOR_OAUTH_TOKEN_URL';
  const fetchGuard = guardedFetch(where, gotFetch(options.http ?? createHttpStack({ timeoutMs: options.timeoutMs })));
  let configuration: Promise<oidc.Configuration> | undefined;
  let cached: { token: Secret; refreshAt: number } | undefined;
  let inflight: Promise<Secret> | undefined;

  async function configure(): Promise<oidc.Configuration> {
    const auth = await clientAuthentication(settings);
    const url = (settings.issuer ?? settings.tokenUrl)!;
    const insecure = url.protocol === 'http:' && isLoopbackHost(url.hostname);
    let config: oidc.Configuration;
    if (settings.issuer) {
      config = await oidc.discovery(settings.issuer, settings.clientId, undefined, auth, {
        execute: insecure ? [oidc.allowInsecureRequests] : [],
        timeout: Math.ceil(options.timeoutMs / 1000),
        [oidc.customFetch]: fetchGuard,
      });
    } else {
      // The token endpoint doubles as the issuer identifier: it is the audience that
      // private_key_jwt assertions are most widely accepted with when no discovery is available.
      config = new oidc.Configuration(
        { issuer: settings.tokenUrl!.href, token_endpoint: settings.tokenUrl!.href },
        settings.clientId,
        undefined,
        auth,
      );
      if (insecure) oidc.allowInsecureRequests(config);
    }
    config.timeout = Math.ceil(options.timeoutMs / 1000);
    config[oidc.customFetch] = fetchGuard;
    return config;
  }

  async function fetchToken(): Promise<Secret> {
    try {
      configuration ??= configure();
      const config = await configuration.catch((error: unknown) => {
        configuration = undefined; // let the next run of discovery try again
        throw translate(error, where, variable, settings.issuer ? 'discovery' : 'token');
      });
      const parameters: Record<string, string> = {};
      if (settings.scope) parameters.scope = settings.scope;
      if (settings.resource) parameters.resource = settings.resource;
      const response = await oidc.clientCredentialsGrant(config, parameters);
      const token = new Secret(response.access_token);
      const lifetimeMs = response.expires_in !== undefined ? response.expires_in * 1000 : UNKNOWN_LIFETIME_MS;
      const margin = Math.min(REFRESH_MARGIN_MS, lifetimeMs / 10);
      cached = { token, refreshAt: options.clock.now().getTime() + lifetimeMs - margin };
      return token;
    } catch (error) {
      throw translate(error, where, variable, 'token');
    }
  }

  return {
    async getAccessToken() {
      if (cached && options.clock.now().getTime() < cached.refreshAt) return cached.token;
      inflight ??= fetchToken().finally(() => {
        inflight = undefined;
      });
      return inflight;
    },
    invalidate(token) {
      if (cached?.token.equals(token)) cached = undefined;
      return true;
    },
  };
}

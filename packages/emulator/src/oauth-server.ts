import type { IncomingMessage, ServerResponse } from 'node:http';

import { exportJWK, generateKeyPair, type JWK } from 'jose';
// oidc-provider ships no types; this is the one place it is used.
// @ts-expect-error no declaration file
import Provider, { errors as providerErrors } from 'oidc-provider';
// The provider's own in-memory adapter, passed explicitly: the emulator is meant to forget on exit.
// @ts-expect-error no declaration file
import { createMemoryAdapter } from 'oidc-provider/lib/adapters/memory_adapter.js';

export interface EmulatedClient {
  clientId: string;
  clientSecret?: string;
  authMethod: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt';
  /** Public keys, for private_key_jwt. */
  jwks?: { keys: JWK[] };
  /** Capabilities the access token grants: `apiTokens|read`, `apiTokens|update`. */
  permissions: string[];
}

export const ALL_PERMISSIONS = ['apiTokens|read', 'apiTokens|update'];
export const PERMISSIONS_CLAIM = 'https://token-rotator.dev/permissions';

export interface OAuthServer {
  issuer: string;
  handle(req: IncomingMessage, res: ServerResponse): void;
}

/**
 * A real OAuth 2.0 authorization server (oidc-provider) for the client credentials grant, issuing
 * JWT access tokens for one resource: the emulated API. Mounted under `/oauth` on the emulator.
 */
export async function createOAuthServer(options: {
  issuer: string;
  resource: string;
  clients: EmulatedClient[];
  accessTokenTtlSeconds: number;
}): Promise<OAuthServer> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'emulator-1' };
  const permissions = new Map(options.clients.map((c) => [c.clientId, c.permissions]));

  const provider = new Provider(options.issuer, {
    clients: options.clients.map((c) => ({
      client_id: c.clientId,
      ...(c.clientSecret ? { client_secret: c.clientSecret } : {}),
      ...(c.jwks ? { jwks: c.jwks } : {}),
      token_endpoint_auth_method: c.authMethod,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
    })),
    jwks: { keys: [signingKey] },
    adapter: createMemoryAdapter(),
    ttl: { ClientCredentials: options.accessTokenTtlSeconds },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => options.resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, indicator: string) => {
          if (indicator !== options.resource) throw new providerErrors.InvalidTarget();
          return {
            scope: 'apiTokens:read apiTokens:update',
            audience: options.resource,
            accessTokenTTL: options.accessTokenTtlSeconds,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    extraTokenClaims: (_ctx: unknown, token: { clientId?: string }) => ({
      [PERMISSIONS_CLAIM]: permissions.get(token.clientId ?? '') ?? [],
    }),
    // The emulator is for tests: client auth assertions may be addressed to the issuer or the token endpoint.
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
  });
  const callback = provider.callback() as (req: IncomingMessage, res: ServerResponse) => void;

  return {
    issuer: options.issuer,
    handle(req, res) {
      // Mounted as express would mount it: the provider reads its mount path from originalUrl.
      const mount = new URL(options.issuer).pathname;
      (req as IncomingMessage & { originalUrl?: string }).originalUrl = req.url;
      req.url = req.url!.slice(mount.length) || '/';
      callback(req, res);
    },
  };
}

import type { Secret } from '../secret.js';

/** How the client authenticates at the OAuth token endpoint. */
export const AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'private_key_jwt'] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];

/** How token-rotator gets the access token it calls the token service with: OAuth client credentials, or a static token. */
export type AuthSettings =
  | {
      kind: 'oauth';
      /** Discovery (`/.well-known/...`) from the issuer, or a bare token endpoint. */
      issuer: URL | undefined;
      tokenUrl: URL | undefined;
      clientId: string;
      method: AuthMethod;
      clientSecret: Secret | undefined;
      /** PEM (PKCS#8) or JWK text, for private_key_jwt. */
      privateKey: Secret | undefined;
      scope: string | undefined;
      resource: string | undefined;
    }
  | { kind: 'static'; accessToken: Secret };

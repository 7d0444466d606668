import { generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';

import { decodeProtectedHeader, errors as joseErrors, jwtVerify } from 'jose';

/** A service account key file, as `gcloud iam service-accounts keys create` writes one. */
export interface ServiceAccountKeyFile {
  type: 'service_account';
  project_id: string;
  private_key_id: string;
  private_key: string;
  client_email: string;
  client_id: string;
  auth_uri: string;
  token_uri: string;
  auth_provider_x509_cert_url: string;
  client_x509_cert_url: string;
  universe_domain: string;
}

export const CLOUD_PLATFORM = 'https://www.googleapis.com/auth/cloud-platform';
const MAX_JWT_LIFETIME_S = 3600;

export type AuthFailure = 'CREDENTIALS_MISSING' | 'ACCESS_TOKEN_TYPE_UNSUPPORTED' | 'ACCESS_TOKEN_EXPIRED';
export type Authenticated = { member: string; via: 'self-signed-jwt' | 'access-token' } | { failure: AuthFailure };

/**
 * Who may call: service accounts with their keys (the public half only is used to verify), and the
 * OAuth access tokens the double's metadata server issued. A call is authenticated the ways Google's
 * front ends accept from this client library: a self-signed JWT (RS256, `kid` naming a key of the
 * account, iss = sub = the account, a `scope` with cloud-platform or an `aud` of the service's
 * https://host/, an hour at most), which google-auth-library signs itself for a service account key
 * (the generated clients set useJWTAccessWithScope, so the key's token_uri is never called), or a
 * bearer access token.
 */
export class Identities {
  readonly #keys = new Map<string, { email: string; publicKey: KeyObject }>();
  readonly #tokens = new Map<string, { email: string; expiresAt: number }>();
  /** How many access tokens the metadata server issued: a test can tell which credential flow the client used. */
  readonly issued = { metadataServer: 0 };

  /** A new service account key (RSA 2048), and its key file. */
  serviceAccount(email: string, projectId: string): ServiceAccountKeyFile {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const kid = randomBytes(20).toString('hex');
    this.#keys.set(kid, { email, publicKey });
    return {
      type: 'service_account',
      project_id: projectId,
      private_key_id: kid,
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
      client_email: email,
      client_id: String(100000000000000000000n + BigInt(`0x${randomBytes(6).toString('hex')}`)),
      auth_uri: 'https://accounts.google.com/o/oauth2/auth',
      token_uri: 'https://oauth2.googleapis.com/token',
      auth_provider_x509_cert_url: 'https://www.googleapis.com/oauth2/v1/certs',
      client_x509_cert_url: `https://www.googleapis.com/robot/v1/metadata/x509/${encodeURIComponent(email)}`,
      universe_domain: 'googleapis.com',
    };
  }

  /** A key deleted in IAM: JWTs it signs are refused from now on. */
  deleteKey(kid: string): void {
    this.#keys.delete(kid);
  }

  issueAccessToken(email: string, lifetimeSeconds = 3599): { token: string; expiresIn: number } {
    const token = `ya29.double-${randomBytes(24).toString('base64url')}`;
    this.#tokens.set(token, { email, expiresAt: Date.now() + lifetimeSeconds * 1000 });
    this.issued.metadataServer++;
    return { token, expiresIn: lifetimeSeconds };
  }

  /** Who the `authorization` metadata of a call to `host` stands for. */
  async authenticate(authorization: string | undefined, host: string): Promise<Authenticated> {
    const bearer = /^Bearer (\S+)$/i.exec(authorization ?? '')?.[1];
    if (!bearer) return { failure: 'CREDENTIALS_MISSING' };
    const token = this.#tokens.get(bearer);
    if (token) {
      return token.expiresAt > Date.now()
        ? { member: `serviceAccount:${token.email}`, via: 'access-token' }
        : { failure: 'ACCESS_TOKEN_EXPIRED' };
    }
    const verified = await this.verifyJwt(bearer, (claims) => {
      const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ') : [];
      return scopes.includes(CLOUD_PLATFORM) || claims.aud === `https://${host}/`;
    });
    return 'email' in verified ? { member: `serviceAccount:${verified.email}`, via: 'self-signed-jwt' } : verified;
  }

  /** A JWT signed by a service account key; `accept` checks its audience or scope. */
  private async verifyJwt(
    jwt: string,
    accept: (claims: Record<string, unknown>) => boolean,
  ): Promise<{ email: string } | { failure: AuthFailure }> {
    let kid: string | undefined;
    try {
      kid = decodeProtectedHeader(jwt).kid;
    } catch {
      return { failure: 'ACCESS_TOKEN_TYPE_UNSUPPORTED' };
    }
    const key = kid ? this.#keys.get(kid) : undefined;
    if (!key) return { failure: 'ACCESS_TOKEN_TYPE_UNSUPPORTED' };
    try {
      const { payload } = await jwtVerify(jwt, key.publicKey, {
        algorithms: ['RS256'],
        issuer: key.email,
        subject: key.email,
        requiredClaims: ['iat', 'exp'],
        clockTolerance: 30,
      });
      if (payload.exp! - payload.iat! > MAX_JWT_LIFETIME_S) return { failure: 'ACCESS_TOKEN_TYPE_UNSUPPORTED' };
      if (!accept(payload as Record<string, unknown>)) return { failure: 'ACCESS_TOKEN_TYPE_UNSUPPORTED' };
      return { email: key.email };
    } catch (error) {
      return { failure: error instanceof joseErrors.JWTExpired ? 'ACCESS_TOKEN_EXPIRED' : 'ACCESS_TOKEN_TYPE_UNSUPPORTED' };
    }
  }
}

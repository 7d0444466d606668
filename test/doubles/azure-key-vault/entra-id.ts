import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

import { exportJWK, generateKeyPair, type JWK, jwtVerify, SignJWT } from 'jose';

import type { Clock } from '../../../src/clock.js';

/*
 * Microsoft Entra ID (login.microsoftonline.com) as MSAL uses it for an app's client credentials
 * grant: instance discovery, the tenant's OpenID configuration and keys, and the v2.0 token
 * endpoint, with a client secret or a federated client assertion (workload identity: a Kubernetes
 * service account token whose issuer, subject and audience match a federated credential of the
 * app). Errors are Entra's: an OAuth error with an AADSTS code in `error_codes` and the description.
 * Access tokens are v1.0 JWTs for the Key Vault resource, signed by this double's key and checked
 * by its Key Vault.
 */

export const AUTHORITY_HOST = 'login.microsoftonline.com';
export const KEY_VAULT_RESOURCE = 'https://vault.azure.net';
export const TOKEN_EXCHANGE_AUDIENCE = 'api://AzureADTokenExchange';
const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;

export interface FederatedCredential {
  /** The cluster's OIDC issuer URL. */
  issuer: string;
  /** `system:serviceaccount:<namespace>:<name>`. */
  subject: string;
  audience: string;
}

export interface AppRegistration {
  clientId: string;
  /** The service principal's object id: what Key Vault authorizes. */
  objectId: string;
  clientSecret?: string;
  federated: FederatedCredential[];
}

/** One token request as the double saw it: never the secret or the assertion. */
export interface RecordedTokenRequest {
  tenant: string;
  clientId?: string;
  grantType?: string;
  scope?: string;
  /** How the client proved itself. */
  credential: 'client_secret' | 'client_assertion' | 'none';
  status: number;
  /** The AADSTS code of a refusal. */
  aadsts?: number;
}

export interface AccessTokenClaims {
  aud: string;
  iss: string;
  tid: string;
  oid: string;
  appid: string;
}

export class EntraId {
  readonly apps = new Map<string, AppRegistration>();
  readonly tokenRequests: RecordedTokenRequest[] = [];
  /** The cluster's OIDC issuer, whose service account tokens the federated credentials trust. */
  readonly clusterIssuer = `https://oidc.prod-aks.azure.com/${randomUUID()}/`;
  /** Token lifetime in seconds, as `expires_in` says it. */
  tokenLifetime = 3599;

  private constructor(
    readonly tenantId: string,
    private readonly clock: Clock,
    private readonly signing: KeyPair & { kid: string },
    private readonly cluster: KeyPair & { kid: string },
    private readonly jwk: JWK,
  ) {}

  static async create(tenantId: string, clock: Clock): Promise<EntraId> {
    const signing = { ...(await generateKeyPair('RS256')), kid: randomBytes(8).toString('hex') };
    const cluster = { ...(await generateKeyPair('RS256')), kid: randomBytes(8).toString('hex') };
    const jwk = { ...(await exportJWK(signing.publicKey)), kid: signing.kid, use: 'sig', kty: 'RSA' };
    return new EntraId(tenantId, clock, signing, cluster, jwk);
  }

  register(options: { clientSecret?: boolean | string; serviceAccount?: string } = {}): AppRegistration {
    const app: AppRegistration = {
      clientId: randomUUID(),
      objectId: randomUUID(),
      ...(options.clientSecret
        ? { clientSecret: typeof options.clientSecret === 'string' ? options.clientSecret : `cs~${randomBytes(24).toString('base64url')}` }
        : {}),
      federated: options.serviceAccount
        ? [{ issuer: this.clusterIssuer, subject: options.serviceAccount, audience: TOKEN_EXCHANGE_AUDIENCE }]
        : [],
    };
    this.apps.set(app.clientId, app);
    return app;
  }

  /** A projected service account token, as the kubelet writes it for the workload identity webhook. */
  async serviceAccountToken(
    subject: string,
    options: { audience?: string; expiresInSeconds?: number; issuer?: string } = {},
  ): Promise<string> {
    const now = Math.floor(this.clock.now().getTime() / 1000);
    return new SignJWT({ 'kubernetes.io': { namespace: subject.split(':')[2], serviceaccount: { name: subject.split(':')[3] } } })
      .setProtectedHeader({ alg: 'RS256', kid: this.cluster.kid })
      .setIssuer(options.issuer ?? this.clusterIssuer)
      .setSubject(subject)
      .setAudience(options.audience ?? TOKEN_EXCHANGE_AUDIENCE)
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(now + (options.expiresInSeconds ?? 3600))
      .sign(this.cluster.privateKey);
  }

  /** The claims of an access token this double issued, or why Key Vault would refuse it. */
  async verifyAccessToken(token: string): Promise<{ claims: AccessTokenClaims } | { problem: 'signature' | 'expired' }> {
    try {
      const { payload } = await jwtVerify(token, this.signing.publicKey, { currentDate: this.clock.now() });
      return { claims: payload as unknown as AccessTokenClaims };
    } catch (error) {
      return { problem: (error as { code?: string }).code === 'ERR_JWT_EXPIRED' ? 'expired' : 'signature' };
    }
  }

  async handle(req: IncomingMessage, res: ServerResponse, url: URL, body: string): Promise<void> {
    const parts = url.pathname.split('/').filter(Boolean);
    const origin = `https://${AUTHORITY_HOST}`;
    if (req.method === 'GET' && parts.join('/') === 'common/discovery/instance') {
      return json(res, 200, {
        tenant_discovery_endpoint: `${origin}/{tenant}/v2.0/.well-known/openid-configuration`,
        'api-version': '1.1',
        metadata: [
          {
            preferred_network: AUTHORITY_HOST,
            preferred_cache: 'login.windows.net',
            aliases: [AUTHORITY_HOST, 'login.windows.net', 'login.microsoft.com', 'sts.windows.net'],
          },
        ],
      });
    }
    const tenant = parts[0] ?? '';
    const rest = parts.slice(1).join('/');
    if (req.method === 'GET' && rest === 'v2.0/.well-known/openid-configuration') {
      if (!this.knownTenant(tenant)) return this.oauthError(res, 400, 'invalid_tenant', 90002, this.tenantNotFound(tenant));
      return json(res, 200, {
        token_endpoint: `${origin}/${tenant}/oauth2/v2.0/token`,
        token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
        jwks_uri: `${origin}/${tenant}/discovery/v2.0/keys`,
        response_modes_supported: ['query', 'fragment', 'form_post'],
        subject_types_supported: ['pairwise'],
        id_token_signing_alg_values_supported: ['RS256'],
        response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
        scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
        issuer: `${origin}/${this.tenantId}/v2.0`,
        request_uri_parameter_supported: false,
        userinfo_endpoint: 'https://graph.microsoft.com/oidc/userinfo',
        authorization_endpoint: `${origin}/${tenant}/oauth2/v2.0/authorize`,
        device_authorization_endpoint: `${origin}/${tenant}/oauth2/v2.0/devicecode`,
        http_logout_supported: true,
        frontchannel_logout_supported: true,
        end_session_endpoint: `${origin}/${tenant}/oauth2/v2.0/logout`,
        claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'nbf', 'tid', 'oid'],
        kerberos_endpoint: `${origin}/${tenant}/kerberos`,
        tenant_region_scope: 'EU',
        cloud_instance_name: 'microsoftonline.com',
        cloud_graph_host_name: 'graph.windows.net',
        msgraph_host: 'graph.microsoft.com',
        rbac_url: 'https://pas.windows.net',
      });
    }
    if (req.method === 'GET' && rest === 'discovery/v2.0/keys') return json(res, 200, { keys: [this.jwk] });
    if (rest === 'oauth2/v2.0/token') {
      if (req.method !== 'POST') return this.oauthError(res, 405, 'invalid_request', 900561, 'The endpoint only accepts POST requests.');
      return this.token(res, tenant, new URLSearchParams(body));
    }
    return json(res, 404, { error: 'not_found', error_description: `no such endpoint: ${url.pathname}` });
  }

  private knownTenant(tenant: string): boolean {
    return tenant === this.tenantId;
  }

  private tenantNotFound(tenant: string): string {
    return `Tenant '${tenant}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud. Check with your subscription administrator, this may happen if there are no active subscriptions for the tenant.`;
  }

  private async token(res: ServerResponse, tenant: string, form: URLSearchParams): Promise<void> {
    const record: RecordedTokenRequest = {
      tenant,
      ...(form.get('client_id') ? { clientId: form.get('client_id')! } : {}),
      ...(form.get('grant_type') ? { grantType: form.get('grant_type')! } : {}),
      ...(form.get('scope') ? { scope: form.get('scope')! } : {}),
      credential: form.get('client_secret') ? 'client_secret' : form.get('client_assertion') ? 'client_assertion' : 'none',
      status: 0,
    };
    this.tokenRequests.push(record);
    const refuse = (status: number, error: string, aadsts: number, description: string) => {
      record.status = status;
      record.aadsts = aadsts;
      this.oauthError(res, status, error, aadsts, description);
    };

    if (!this.knownTenant(tenant)) return refuse(400, 'invalid_request', 90002, this.tenantNotFound(tenant));
    if (form.get('grant_type') !== 'client_credentials') {
      return refuse(400, 'unsupported_grant_type', 70003, 'The app requested an unsupported grant type.');
    }
    const clientId = form.get('client_id') ?? '';
    const app = this.apps.get(clientId);
    if (!app) {
      return refuse(
        400,
        'unauthorized_client',
        700016,
        `Application with identifier '${clientId}' was not found in the directory '${tenant}'. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant. You may have sent your authentication request to the wrong tenant.`,
      );
    }
    const scope = (form.get('scope') ?? '').split(' ').find((s) => s.endsWith('/.default'));
    const resource = scope?.slice(0, -'/.default'.length);
    if (resource !== KEY_VAULT_RESOURCE) {
      return refuse(
        400,
        'invalid_resource',
        500011,
        `The resource principal named ${resource ?? '(none)'} was not found in the tenant named ${tenant}. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant. You might have sent your authentication request to the wrong tenant.`,
      );
    }

    const secret = form.get('client_secret');
    const assertion = form.get('client_assertion');
    if (secret !== null) {
      if (!app.clientSecret || secret !== app.clientSecret) {
        return refuse(
          401,
          'invalid_client',
          7000215,
          `Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '${app.clientId}'.`,
        );
      }
    } else if (assertion !== null) {
      if (form.get('client_assertion_type') !== CLIENT_ASSERTION_TYPE) {
        return refuse(400, 'invalid_request', 50027, 'Invalid JWT token. The client_assertion_type is not supported.');
      }
      const problem = await this.federatedProblem(app, assertion);
      if (problem) return refuse(problem.status, problem.error, problem.aadsts, problem.description);
    } else {
      return refuse(
        401,
        'invalid_client',
        7000218,
        "The request body must contain the following parameter: 'client_assertion' or 'client_secret'.",
      );
    }

    const now = Math.floor(this.clock.now().getTime() / 1000);
    const accessToken = await new SignJWT({ tid: this.tenantId, oid: app.objectId, appid: app.clientId, idtyp: 'app', ver: '1.0' })
      .setProtectedHeader({ alg: 'RS256', kid: this.signing.kid, typ: 'JWT' })
      .setAudience(resource)
      .setIssuer(`https://sts.windows.net/${this.tenantId}/`)
      .setSubject(app.objectId)
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(now + this.tokenLifetime)
      .sign(this.signing.privateKey);
    record.status = 200;
    json(res, 200, { token_type: 'Bearer', expires_in: this.tokenLifetime, ext_expires_in: this.tokenLifetime, access_token: accessToken });
  }

  /** Why a client assertion does not prove the app's identity: Entra's answers for workload identity federation. */
  private async federatedProblem(
    app: AppRegistration,
    assertion: string,
  ): Promise<{ status: number; error: string; aadsts: number; description: string } | undefined> {
    let claims: { iss?: string; sub?: string; aud?: string | string[] };
    try {
      const { payload } = await jwtVerify(assertion, this.cluster.publicKey, { currentDate: this.clock.now() });
      claims = payload;
    } catch (error) {
      if ((error as { code?: string }).code === 'ERR_JWT_EXPIRED') {
        return {
          status: 400,
          error: 'invalid_client',
          aadsts: 700024,
          description: 'Client assertion is not within its valid time range.',
        };
      }
      return {
        status: 401,
        error: 'invalid_client',
        aadsts: 700212,
        description: 'No matching federated identity record found for presented assertion audience or the signature could not be verified.',
      };
    }
    const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    const match = app.federated.find((f) => f.issuer === claims.iss && f.subject === claims.sub && audiences.includes(f.audience));
    if (match) return undefined;
    if (!app.federated.some((f) => f.issuer === claims.iss)) {
      return {
        status: 400,
        error: 'invalid_request',
        aadsts: 700211,
        description: `No matching federated identity record found for presented assertion issuer '${claims.iss}'. Please check your federated identity credential Subject, Audience and Issuer against the presented assertion.`,
      };
    }
    return {
      status: 400,
      error: 'invalid_request',
      aadsts: 70021,
      description: `No matching federated identity record found for presented assertion. Assertion Issuer: '${claims.iss}'. Assertion Subject: '${claims.sub}'. Assertion Audience: '${audiences.join(',')}'.`,
    };
  }

  private oauthError(res: ServerResponse, status: number, error: string, aadsts: number, description: string): void {
    const traceId = randomUUID();
    const correlationId = randomUUID();
    const timestamp = this.clock
      .now()
      .toISOString()
      .replace('T', ' ')
      .replace(/\.\d+Z$/, 'Z');
    json(res, status, {
      error,
      error_description: `AADSTS${aadsts}: ${description} Trace ID: ${traceId} Correlation ID: ${correlationId} Timestamp: ${timestamp}`,
      error_codes: [aadsts],
      timestamp,
      trace_id: traceId,
      correlation_id: correlationId,
      error_uri: `https://${AUTHORITY_HOST}/error?code=${aadsts}`,
    });
  }
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store, no-cache',
    ...headers,
  });
  res.end(text);
}

import { readFile } from 'node:fs/promises';

import got, { type Got, HTTPError, type Method, RequestError } from 'got';

import { type Clock, systemClock } from '../../clock.js';
import { SinkError } from '../../errors.js';
import { describeRedirect, followSameOriginOnly, isRedirect } from '../../http/redirect-policy.js';
import { MASK, remoteText } from '../../http/remote-text.js';
import { limitResponseSize, ResponseTooLargeError } from '../../http/response-size.js';
import type { Logger } from '../../log/logger.js';
import { Secret } from '../../secret.js';
import type { VaultAuth, VaultSinkConfig } from './vault-sink-config.js';

/**
 * Vault's HTTP API as token-rotator uses it (https://developer.hashicorp.com/vault/api-docs): JSON
 * over got, the token in X-Vault-Token, the namespace in X-Vault-Namespace, errors as
 * `{"errors": [...]}`. There is no official JavaScript SDK; this is the documented wire protocol.
 */

/** The part of a sink's config that says how to reach Vault and log in: one session per distinct one. */
export type VaultConnection = Pick<VaultSinkConfig, 'address' | 'namespace' | 'caCertFile' | 'auth'>;

export const connectionKey = (c: VaultConnection) => JSON.stringify([c.address, c.namespace ?? '', c.caCertFile ?? '', c.auth]);

/** An answer from Vault: its status and its JSON body (undefined for an empty or non-JSON one). */
export interface VaultAnswer {
  status: number;
  body: VaultBody | undefined;
}

/** The envelope of every Vault answer; `errors` on failure. */
export interface VaultBody {
  data?: unknown;
  auth?: { client_token?: unknown; lease_duration?: unknown; policies?: unknown } | null;
  errors?: unknown;
  warnings?: unknown;
  [key: string]: unknown;
}

export interface VaultRequest {
  /** How every error about it begins: `cannot write vault https://vault:8200 secret/apps/ingest[token]`. */
  what: string;
  signal?: AbortSignal | undefined;
  json?: unknown;
  searchParams?: Record<string, string>;
  contentType?: string;
  /** Statuses the caller handles itself (404 for a missing secret, 400 for a check-and-set miss). */
  accept?: readonly number[];
}

/** Well above a secret with its metadata and a few versions' worth of data, well below harm. */
const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
/** A token from a login is replaced this long before it expires (at most half its life). */
const RENEW_MARGIN_MS = 10_000;

/** Vault's error texts, joined; `permission denied` may come wrapped as "1 error occurred: * permission denied". */
export function vaultErrors(body: VaultBody | undefined): string[] {
  const errors = body?.errors;
  return Array.isArray(errors) ? errors.filter((e): e is string => typeof e === 'string') : [];
}

export const isPermissionDenied = (answer: VaultAnswer) =>
  answer.status === 403 && vaultErrors(answer.body).some((e) => e.includes('permission denied'));

interface HeldToken {
  value: Secret;
  /** Epoch ms; undefined for a token whose expiry the sink does not know (a given token). */
  renewAt?: number;
  /** Whether a new one can be had by logging in again. */
  login: boolean;
}

/**
 * One connection to one Vault with one identity: the token (given or from a login, renewed by
 * logging in again before it expires, and once more when Vault answers 403 to a login token that
 * may have expired early), and requests that never follow a redirect to another origin.
 */
export class VaultSession {
  readonly #connection: VaultConnection;
  readonly #logger: Logger;
  readonly #reference: (variable: string) => Secret | undefined;
  readonly #clock: Clock;
  readonly #http: Got;
  /** Every credential this session sent: masked in any text Vault answers with. */
  readonly #credentials = new Set<string>();
  #token: HeldToken | undefined;
  #pending: Promise<HeldToken> | undefined;
  #ca: Promise<string | undefined> | undefined;

  constructor(connection: VaultConnection, context: { logger: Logger; reference(variable: string): Secret | undefined; clock?: Clock }) {
    this.#connection = connection;
    this.#logger = context.logger;
    this.#reference = context.reference;
    this.#clock = context.clock ?? systemClock;
    this.#http = got.extend({
      prefixUrl: `${connection.address}/v1/`,
      timeout: { request: 30_000 },
      headers: {
        'user-agent': 'token-rotator',
        accept: 'application/json',
        // What the vault CLI sends: Vault answers such requests, never a browser's.
        'x-vault-request': 'true',
        ...(connection.namespace ? { 'x-vault-namespace': connection.namespace } : {}),
      },
      responseType: 'text',
      // The token goes with every request: never to another origin (a standby's redirect to the active node).
      followRedirect: followSameOriginOnly(connection.address),
      handlers: [limitResponseSize(MAX_RESPONSE_BYTES)],
      // Reads are safe to repeat; a write is not repeated blindly (its check-and-set does that job).
      retry: { limit: 1, methods: ['GET'], statusCodes: [429, 500, 502, 503, 504], backoffLimit: 2000 },
    });
  }

  /** `auth/kubernetes` as role `x`: for messages. */
  describeAuth(): string {
    const auth = this.#connection.auth;
    switch (auth.method) {
      case 'token':
        return `the token in ${auth.tokenFrom}`;
      case 'kubernetes':
        return `a kubernetes login as role "${auth.role}" at auth/${auth.mount}`;
      case 'approle':
        return `an approle login (${auth.roleIdFrom}, ${auth.secretIdFrom}) at auth/${auth.mount}`;
    }
  }

  /**
   * A request with the token. A 403 "permission denied" to a token from a login (it may have been
   * revoked or expired early), or to a given token whose variable now holds another one (a file
   * Vault Agent rewrites), is sent once more with a new token.
   */
  async call(method: Method, path: string, request: VaultRequest): Promise<VaultAnswer> {
    request.signal?.throwIfAborted();
    const used = await this.token(request);
    const answer = await this.send(method, path, request, used.value);
    if (!isPermissionDenied(answer)) return this.checked(method, path, request, answer);
    const fresh = await this.refresh(used, request);
    if (!fresh) return this.checked(method, path, request, answer);
    this.#logger.info({ vault: this.#connection.address, path }, 'Vault refused the token; retrying once with a new one');
    return this.checked(method, path, request, await this.send(method, path, request, fresh.value));
  }

  /** The current token, logging in first when there is none or it is about to expire. */
  async token(request: Pick<VaultRequest, 'what' | 'signal'>): Promise<HeldToken> {
    const held = this.#token;
    if (held && (held.renewAt === undefined || this.#clock.now().getTime() < held.renewAt)) return held;
    return this.obtain(request);
  }

  /**
   * Revokes the token a login made (a token given by the user is theirs, never revoked): logins
   * would otherwise pile up as leases until they expire. Best effort, briefly; never throws.
   */
  async revokeLogin(): Promise<void> {
    const held = this.#token;
    this.#token = undefined;
    if (!held?.login) return;
    try {
      await this.#http.post('auth/token/revoke-self', {
        headers: { 'x-vault-token': held.value.reveal() },
        timeout: { request: 5000 },
        retry: { limit: 0 },
        ...(await this.certificateAuthority({ what: '' }).then(
          (ca) => (ca ? { https: { certificateAuthority: ca } } : {}),
          () => ({}),
        )),
      });
    } catch {
      this.#logger.debug({ vault: this.#connection.address }, 'could not revoke the Vault token of the login; it expires by itself');
    }
  }

  /** A new token in place of `used`, or undefined when no other can be had. */
  private async refresh(used: HeldToken, request: VaultRequest): Promise<HeldToken | undefined> {
    if (this.#token !== used) return this.token(request); // another call already replaced it
    if (used.login) {
      this.#token = undefined;
      return this.obtain(request);
    }
    const again = this.givenToken(request);
    if (again.value.equals(used.value)) return undefined;
    this.#token = again;
    return again;
  }

  private obtain(request: Pick<VaultRequest, 'what' | 'signal'>): Promise<HeldToken> {
    // Concurrent calls share one login.
    this.#pending ??= this.login(request).finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  private givenToken(request: Pick<VaultRequest, 'what'>): HeldToken {
    const auth = this.#connection.auth as Extract<VaultAuth, { method: 'token' }>;
    const value = this.#reference(auth.tokenFrom);
    if (!value) {
      throw new SinkError(
        `${request.what}: no Vault token: ${auth.tokenFrom} (or ${auth.tokenFrom}_FILE) is not set; ` +
          'set it, or use auth: { method: kubernetes, role: … } or approle',
      );
    }
    this.#credentials.add(value.reveal());
    return { value, login: false };
  }

  private async login(request: Pick<VaultRequest, 'what' | 'signal'>): Promise<HeldToken> {
    const auth = this.#connection.auth;
    if (auth.method === 'token') {
      this.#token = this.givenToken(request);
      return this.#token;
    }
    let body: Record<string, string>;
    if (auth.method === 'kubernetes') {
      let jwt: string;
      try {
        jwt = (await readFile(auth.jwtFile, 'utf8')).trim();
      } catch (error) {
        throw new SinkError(
          `${request.what}: cannot read the service account token ${auth.jwtFile} for the kubernetes login ` +
            `(${(error as NodeJS.ErrnoException).code ?? 'unreadable'}): run in a pod with a service account token mounted, or set auth.jwtFile`,
        );
      }
      // Known to the log's scrubber too, as every secret this process holds.
      this.#credentials.add(new Secret(jwt).reveal());
      body = { role: auth.role, jwt };
    } else {
      const roleId = this.#reference(auth.roleIdFrom);
      const secretId = this.#reference(auth.secretIdFrom);
      const missing = [!roleId && auth.roleIdFrom, !secretId && auth.secretIdFrom].filter(Boolean);
      if (missing.length > 0 || !roleId || !secretId) {
        throw new SinkError(`${request.what}: the approle login needs ${missing.join(' and ')} (or …_FILE), not set`);
      }
      this.#credentials.add(roleId.reveal());
      this.#credentials.add(secretId.reveal());
      body = { role_id: roleId.reveal(), secret_id: secretId.reveal() };
    }
    const path = `auth/${auth.mount}/login`;
    const answer = await this.send('POST', path, { ...request, json: body }, undefined);
    const clientToken = answer.body?.auth?.client_token;
    if (answer.status !== 200 || typeof clientToken !== 'string' || clientToken === '') {
      throw new SinkError(`${request.what}: Vault refused ${this.describeAuth()}: ${this.statusText(answer)}${loginHint(auth, answer)}`);
    }
    this.#credentials.add(clientToken);
    const leaseSeconds = Number(answer.body?.auth?.lease_duration ?? 0);
    const now = this.#clock.now().getTime();
    const renewAt =
      Number.isFinite(leaseSeconds) && leaseSeconds > 0
        ? now + leaseSeconds * 1000 - Math.min(RENEW_MARGIN_MS, (leaseSeconds * 1000) / 2)
        : undefined;
    this.#logger.info(
      { vault: this.#connection.address, auth: `${auth.method} at auth/${auth.mount}`, ttlSeconds: leaseSeconds || null },
      'logged in to Vault',
    );
    this.#token = { value: new Secret(clientToken), login: true, ...(renewAt !== undefined ? { renewAt } : {}) };
    return this.#token;
  }

  /** One HTTP exchange. Transport failures become SinkErrors naming the sink; an abort stays an abort. */
  private async send(method: Method, path: string, request: VaultRequest, token: Secret | undefined): Promise<VaultAnswer> {
    const ca = await this.certificateAuthority(request);
    try {
      const response = await this.#http(path, {
        method,
        headers: {
          ...(token ? { 'x-vault-token': token.reveal() } : {}),
          ...(request.contentType ? { 'content-type': request.contentType } : {}),
        },
        ...(request.json !== undefined ? { json: request.json } : {}),
        ...(request.searchParams ? { searchParams: request.searchParams } : {}),
        ...(ca ? { https: { certificateAuthority: ca } } : {}),
        ...(request.signal ? { signal: request.signal } : {}),
      });
      this.#logger.debug({ vault: this.#connection.address, method, path, status: response.statusCode }, 'vault request');
      if (isRedirect(response.statusCode)) throw this.redirected(method, path, request, response);
      return { status: response.statusCode, body: parseBody(response.body) };
    } catch (error) {
      request.signal?.throwIfAborted();
      if (error instanceof HTTPError) {
        const status = error.response.statusCode;
        this.#logger.debug({ vault: this.#connection.address, method, path, status }, 'vault request');
        if (isRedirect(status)) throw this.redirected(method, path, request, error.response);
        return { status, body: parseBody(error.response.body as string) };
      }
      if (error instanceof SinkError) throw error;
      if (error instanceof ResponseTooLargeError) {
        throw new SinkError(`${request.what}: Vault's answer to ${method} ${path} ${error.message}`);
      }
      const code = error instanceof RequestError ? error.code : (error as Error)?.name;
      throw new SinkError(
        `${request.what}: cannot reach Vault at ${this.#connection.address} (${code ?? 'unknown error'})${transportHint(code)}`,
      );
    }
  }

  /** A redirect is answered as the error it is: following one to another origin would send the token there. */
  private redirected(method: Method, path: string, request: VaultRequest, response: Parameters<typeof describeRedirect>[0]): SinkError {
    return new SinkError(
      `${request.what}: Vault answered ${method} ${path} with ${describeRedirect(response)}, which is never followed ` +
        '(the token would go with it); set address to the active node, or to a load balancer that forwards to it',
    );
  }

  /** Failures the caller does not handle: a SinkError with Vault's words and what to do. */
  private checked(method: Method, path: string, request: VaultRequest, answer: VaultAnswer): VaultAnswer {
    if ((answer.status >= 200 && answer.status < 300) || request.accept?.includes(answer.status)) return answer;
    throw this.failure(method, path, request.what, answer);
  }

  /** The error for an answer: Vault's words (masked), and a hint by status. */
  failure(method: Method, path: string, what: string, answer: VaultAnswer, hint = ''): SinkError {
    return new SinkError(
      `${what}: Vault answered ${method} ${path}: ${this.statusText(answer)}${hint || statusHint(answer.status, this.#connection)}`,
    );
  }

  /** `403 permission denied`: Vault's error texts masked (they may echo what was sent), one line. */
  statusText(answer: VaultAnswer): string {
    const text = vaultErrors(answer.body)
      .map((e) => e.replace(/^\d+ errors? occurred:\s*/, '').replace(/\s*\*\s*/g, ' '))
      .join('; ')
      .trim();
    return `${answer.status}${text ? ` ${remoteText(this.mask(text))}` : ''}`;
  }

  private mask(text: string): string {
    let out = text;
    for (const credential of this.#credentials) if (credential.length >= 4) out = out.split(credential).join(MASK);
    return out;
  }

  private certificateAuthority(request: Pick<VaultRequest, 'what'>): Promise<string | undefined> {
    const file = this.#connection.caCertFile;
    if (!file) return Promise.resolve(undefined);
    this.#ca ??= readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      this.#ca = undefined;
      throw new SinkError(
        `${request.what}: cannot read the CA certificate file ${file} (${error.code ?? 'unreadable'}); ` +
          'set caCertFile (or VAULT_CACERT) to a PEM file of the CA that signed Vault’s certificate',
      );
    });
    return this.#ca;
  }
}

function parseBody(text: string | undefined): VaultBody | undefined {
  if (!text) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as VaultBody) : undefined;
  } catch {
    // A proxy's HTML page: nothing to repeat.
    return undefined;
  }
}

function statusHint(status: number, connection: VaultConnection): string {
  switch (status) {
    case 403:
      return connection.auth.method === 'token'
        ? ' (the token is invalid or expired, or its policies do not allow this)'
        : ' (the policies of the login role do not allow this)';
    case 404:
      return ` (no such path: is there a KV version 2 engine at that mount${connection.namespace ? ` in namespace ${connection.namespace}` : ''}?)`;
    case 412:
      return ' (a performance standby has not caught up yet; the next run tries again)';
    case 429:
      return ' (rate limited; the next run tries again)';
    case 503:
      return ' (Vault is sealed, in maintenance or overloaded; the next run tries again)';
    default:
      return '';
  }
}

function loginHint(auth: Exclude<VaultAuth, { method: 'token' }>, answer: VaultAnswer): string {
  if (answer.status === 403) {
    return auth.method === 'kubernetes'
      ? ` (check that role ${auth.role}'s bound_service_account_names and bound_service_account_namespaces name this pod's service account, and the auth method's kubernetes_host)`
      : ' (check the role id and that the secret id is still valid)';
  }
  if (answer.status === 400 && auth.method === 'kubernetes') return ` (does role ${auth.role} exist at auth/${auth.mount}?)`;
  if (answer.status === 400) return ' (check the role id and that the secret id is still valid)';
  if (answer.status === 404) return ` (is an auth method enabled at auth/${auth.mount}?)`;
  return '';
}

function transportHint(code: string | undefined): string {
  switch (code) {
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
      return ": its certificate is not trusted; set caCertFile (or VAULT_CACERT) to the CA's PEM file";
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return ': its certificate is not for that host name';
    case 'ETIMEDOUT':
      return ': no answer in time';
    default:
      return '';
  }
}

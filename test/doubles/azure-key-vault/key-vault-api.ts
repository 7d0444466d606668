import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

import type { Clock } from '../../../src/clock.js';
import { AUTHORITY_HOST, type EntraId, json, KEY_VAULT_RESOURCE } from './entra-id.js';
import {
  ACCESS_POLICY_PERMISSION,
  RBAC_ACTION,
  RETENTION_DAYS,
  type SecretDataAction,
  type StoredSecret,
  type StoredVersion,
  type VaultState,
} from './key-vault-store.js';

/*
 * The Key Vault secrets data plane (REST API 7.x and the dated versions since), for the calls the
 * JavaScript SDK makes: the bearer challenge, GET/PUT/PATCH of secrets and versions, version
 * listing with paging, soft delete with its 409 ObjectIsDeletedButRecoverable, deleted secrets
 * (get, recover, purge), and authorization by Azure RBAC data actions or access-policy permissions,
 * with Key Vault's error bodies `{"error": {"code", "message", "innererror": {"code"}}}`.
 */

/** The API versions the service accepts for secrets (older ones exist; the SDK sends the newest). */
export const API_VERSIONS = ['7.0', '7.1', '7.2', '7.3', '7.4', '7.5', '7.6', '2025-07-01', '2026-04-01'];
const LATEST_API_VERSION = '2026-04-01';

export const VAULT_DOMAIN = 'vault.azure.net';
const SECRET_NAME = /^[0-9a-zA-Z-]{1,127}$/;
const VERSION = /^[0-9a-f]{32}$/i;
/** 25 KB: Key Vault's limit on a secret's value. */
export const MAX_VALUE_BYTES = 25 * 1024;
const MAX_TAGS = 15;
const PAGE_SIZE = 25;

/** One data-plane request as the double saw it: never a body, a header value or a token. */
export interface RecordedVaultRequest {
  vault: string;
  method: string;
  /** The URL path, without the query. */
  path: string;
  apiVersion?: string;
  /** Whether it carried a bearer token (the SDK's first request of a client carries none, to get the challenge). */
  bearer: boolean;
  /** The principal's object id, once the token was valid. */
  objectId?: string;
  status: number;
  /** Committed, but the connection was dropped instead of answering (see VaultState.dropAfterCommit). */
  dropped?: boolean;
  /** Key Vault's error code and inner code, for refusals. */
  errorCode?: string;
  innerCode?: string;
}

class KeyVaultError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly inner?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

interface Caller {
  objectId: string;
  appId: string;
  tenantId: string;
}

const unixNow = (clock: Clock) => Math.floor(clock.now().getTime() / 1000);

export class KeyVaultApi {
  readonly requests: RecordedVaultRequest[] = [];

  constructor(
    private readonly entra: EntraId,
    private readonly clock: Clock,
  ) {}

  static vaultUrl(vault: string): string {
    return `https://${vault}.${VAULT_DOMAIN}`;
  }

  async handle(vault: VaultState, req: IncomingMessage, res: ServerResponse, url: URL, body: string): Promise<void> {
    const record: RecordedVaultRequest = {
      vault: vault.name,
      method: req.method ?? 'GET',
      path: url.pathname,
      ...(url.searchParams.has('api-version') ? { apiVersion: url.searchParams.get('api-version')! } : {}),
      bearer: /^Bearer /i.test(req.headers.authorization ?? ''),
      status: 0,
    };
    this.requests.push(record);
    const headers = {
      'x-ms-keyvault-region': vault.location,
      'x-ms-request-id': randomUUID(),
      'x-ms-keyvault-service-version': '1.9.2164.1',
      'x-ms-keyvault-network-info': 'conn_type=Ipv4;addr=127.0.0.1;act_addr_fam=InterNetwork;',
    };
    try {
      if (vault.outage) throw new KeyVaultError(503, 'ServiceUnavailable', 'The service is temporarily unavailable. Please retry later.');
      const caller = await this.authenticate(vault, req.headers.authorization);
      record.objectId = caller.objectId;
      const apiVersion = url.searchParams.get('api-version');
      if (!apiVersion) throw new KeyVaultError(400, 'BadParameter', "The 'api-version' query parameter is missing.");
      if (!API_VERSIONS.includes(apiVersion)) {
        throw new KeyVaultError(
          400,
          'BadParameter',
          `The specified version (${apiVersion}) is not recognized. Consider using the latest supported version (${LATEST_API_VERSION}).`,
        );
      }
      const { status, body: answer } = this.route(vault, caller, record.method, url, body);
      record.status = status;
      if (record.method === 'PUT' && status === 200 && vault.dropAfterCommit > 0) {
        vault.dropAfterCommit--;
        record.dropped = true;
        req.socket.destroy();
        return;
      }
      if (answer === undefined) {
        res.writeHead(status, headers).end();
      } else {
        json(res, status, answer, headers);
      }
    } catch (error) {
      if (!(error instanceof KeyVaultError)) throw error;
      record.status = error.status;
      record.errorCode = error.code;
      if (error.inner) record.innerCode = error.inner;
      json(
        res,
        error.status,
        { error: { code: error.code, message: error.message, ...(error.inner ? { innererror: { code: error.inner } } : {}) } },
        { ...headers, ...error.headers },
      );
    }
  }

  /** The bearer challenge: no token, or one Key Vault does not accept, is answered 401 with where to get one. */
  private async authenticate(vault: VaultState, authorization: string | undefined): Promise<Caller> {
    const challenge = {
      'www-authenticate': `Bearer authorization="https://${AUTHORITY_HOST}/${vault.tenantId}", resource="${KEY_VAULT_RESOURCE}"`,
    };
    const token = /^Bearer (.+)$/i.exec(authorization ?? '')?.[1];
    if (!token) throw new KeyVaultError(401, 'Unauthorized', 'AKV10000: Request is missing a Bearer or PoP token.', undefined, challenge);
    const verified = await this.entra.verifyAccessToken(token);
    if ('problem' in verified) {
      throw new KeyVaultError(
        401,
        'Unauthorized',
        verified.problem === 'expired'
          ? 'Error validating token: IDX10223: Lifetime validation failed. The token is expired.'
          : 'Error validating token: IDX10511: Signature validation failed.',
        undefined,
        challenge,
      );
    }
    const { claims } = verified;
    if (claims.aud !== KEY_VAULT_RESOURCE) {
      throw new KeyVaultError(
        401,
        'Unauthorized',
        `AKV10022: Invalid audience. Expected ${KEY_VAULT_RESOURCE}, found: ${claims.aud}.`,
        undefined,
        challenge,
      );
    }
    if (claims.tid !== vault.tenantId) {
      throw new KeyVaultError(
        401,
        'Unauthorized',
        `AKV10032: Invalid issuer. Expected one of https://sts.windows.net/${vault.tenantId}/, https://login.microsoftonline.com/${vault.tenantId}/v2.0, found ${claims.iss}.`,
        undefined,
        challenge,
      );
    }
    return { objectId: claims.oid, appId: claims.appid, tenantId: claims.tid };
  }

  private route(vault: VaultState, caller: Caller, method: string, url: URL, rawBody: string): { status: number; body?: unknown } {
    // The SDK asks for the latest version as `/secrets/{name}/` (an empty version segment).
    const segments = url.pathname.split('/').slice(1);
    const collection = segments[0]?.toLowerCase();
    const name = decodeURIComponent(segments[1] ?? '');
    const third = segments[2] === undefined ? undefined : decodeURIComponent(segments[2]);
    if (segments.length > 4 || (collection !== 'secrets' && collection !== 'deletedsecrets')) {
      throw new KeyVaultError(404, 'NotFound', `The requested resource ${url.pathname} was not found.`);
    }
    if (segments.length >= 2 && name !== '' && !SECRET_NAME.test(name)) {
      throw new KeyVaultError(400, 'BadParameter', `The request URI contains an invalid name: ${name}`);
    }
    const body = () => parseBody(rawBody);
    const vaultUrl = KeyVaultApi.vaultUrl(vault.name);

    if (collection === 'secrets') {
      if (segments.length === 1 || (segments.length === 2 && name === '')) {
        if (method !== 'GET') throw methodNotAllowed();
        this.authorize(vault, caller, 'readMetadata', undefined);
        const latest = [...vault.secrets.values()].map((s) => ({ secret: s, version: s.versions.at(-1)! }));
        return {
          status: 200,
          body: this.page(
            latest.map((l) => item(vaultUrl, l.secret, l.version, false)),
            url,
            `${vaultUrl}:443/secrets`,
          ),
        };
      }
      if (segments.length === 2) {
        if (method === 'PUT') return { status: 200, body: this.set(vault, caller, name, body()) };
        if (method === 'DELETE') return { status: 200, body: this.delete(vault, caller, name) };
        if (method === 'GET') return { status: 200, body: this.get(vault, caller, name, '') };
        if (method === 'PATCH') return { status: 200, body: this.update(vault, caller, name, '', body()) };
        throw methodNotAllowed();
      }
      if (segments.length === 3 && third?.toLowerCase() === 'versions') {
        if (method !== 'GET') throw methodNotAllowed();
        this.authorize(vault, caller, 'readMetadata', name);
        const secret = this.existing(vault, name, '');
        return {
          status: 200,
          body: this.page(
            secret.versions.map((v) => item(vaultUrl, secret, v, true)),
            url,
            `${vaultUrl}:443/secrets/${encodeURIComponent(secret.name)}/versions`,
          ),
        };
      }
      if (segments.length === 3) {
        if (method === 'GET') return { status: 200, body: this.get(vault, caller, name, third ?? '') };
        if (method === 'PATCH') return { status: 200, body: this.update(vault, caller, name, third ?? '', body()) };
        throw methodNotAllowed();
      }
      throw new KeyVaultError(404, 'NotFound', `The requested resource ${url.pathname} was not found.`);
    }

    // deletedsecrets
    if (segments.length === 1 || (segments.length === 2 && name === '')) {
      if (method !== 'GET') throw methodNotAllowed();
      this.authorize(vault, caller, 'readMetadata', undefined);
      const items = [...vault.deleted.values()].map((d) => ({
        ...item(vaultUrl, d.secret, d.secret.versions.at(-1)!, false),
        ...deletion(vaultUrl, d),
      }));
      return { status: 200, body: this.page(items, url, `${vaultUrl}:443/deletedsecrets`) };
    }
    if (segments.length === 2) {
      if (method === 'GET') {
        this.authorize(vault, caller, 'getSecret', name);
        const deleted = vault.deletedSecret(name);
        if (!deleted) throw new KeyVaultError(404, 'SecretNotFound', `Deleted Secret not found: ${name}`);
        return {
          status: 200,
          body: { ...bundle(vaultUrl, deleted.secret, deleted.secret.versions.at(-1)!, vault, false), ...deletion(vaultUrl, deleted) },
        };
      }
      if (method === 'DELETE') {
        this.authorize(vault, caller, 'purge', name);
        if (!vault.deletedSecret(name)) throw new KeyVaultError(404, 'SecretNotFound', `Deleted Secret not found: ${name}`);
        vault.deleted.delete(name.toLowerCase());
        return { status: 204 };
      }
      throw methodNotAllowed();
    }
    if (segments.length === 3 && third?.toLowerCase() === 'recover') {
      if (method !== 'POST') throw methodNotAllowed();
      this.authorize(vault, caller, 'recover', name);
      const deleted = vault.deletedSecret(name);
      if (!deleted) throw new KeyVaultError(404, 'SecretNotFound', `Deleted Secret not found: ${name}`);
      vault.deleted.delete(name.toLowerCase());
      vault.secrets.set(name.toLowerCase(), deleted.secret);
      return { status: 200, body: bundle(vaultUrl, deleted.secret, deleted.secret.versions.at(-1)!, vault, false) };
    }
    throw new KeyVaultError(404, 'NotFound', `The requested resource ${url.pathname} was not found.`);
  }

  private get(vault: VaultState, caller: Caller, name: string, version: string): unknown {
    this.authorize(vault, caller, 'getSecret', name);
    const secret = this.existing(vault, name, version);
    const stored = this.version(secret, name, version);
    if (!stored.enabled) throw new KeyVaultError(403, 'Forbidden', 'Operation get is not allowed on a disabled secret.', 'SecretDisabled');
    return bundle(KeyVaultApi.vaultUrl(vault.name), secret, stored, vault, true);
  }

  private set(vault: VaultState, caller: Caller, name: string, body: Record<string, unknown>): unknown {
    this.authorize(vault, caller, 'setSecret', name);
    if (typeof body.value !== 'string') throw new KeyVaultError(400, 'BadParameter', 'Property value is required and must be a string.');
    if (Buffer.byteLength(body.value, 'utf8') > MAX_VALUE_BYTES) {
      throw new KeyVaultError(400, 'BadParameter', `Secret value is too large: the maximum size is ${MAX_VALUE_BYTES} bytes.`);
    }
    const tags = validTags(body.tags);
    const contentType = validContentType(body.contentType);
    const attributes = validAttributes(body.attributes);
    if (vault.deletedSecret(name)) {
      throw new KeyVaultError(
        409,
        'Conflict',
        `Secret ${name} is currently in a deleted but recoverable state, and its name cannot be reused; in this state, the secret can only be recovered or purged.`,
        'ObjectIsDeletedButRecoverable',
      );
    }
    const stored = vault.addVersion(
      vault.secret(name)?.name ?? name,
      {
        value: body.value,
        ...(contentType ? { contentType } : {}),
        ...(tags ? { tags } : {}),
        enabled: attributes.enabled ?? true,
        ...numeric(attributes),
      },
      unixNow(this.clock),
    );
    return bundle(KeyVaultApi.vaultUrl(vault.name), vault.secret(name)!, stored, vault, true);
  }

  private update(vault: VaultState, caller: Caller, name: string, version: string, body: Record<string, unknown>): unknown {
    this.authorize(vault, caller, 'update', name);
    const secret = this.existing(vault, name, version);
    const stored = this.version(secret, name, version);
    const tags = validTags(body.tags);
    const contentType = validContentType(body.contentType);
    const attributes = validAttributes(body.attributes);
    if (tags !== undefined) stored.tags = tags;
    if (contentType !== undefined) stored.contentType = contentType;
    if (attributes.enabled !== undefined) stored.enabled = attributes.enabled;
    Object.assign(stored, numeric(attributes));
    stored.updated = unixNow(this.clock);
    // The update answer has the version's attributes and tags, not its value.
    return bundle(KeyVaultApi.vaultUrl(vault.name), secret, stored, vault, false);
  }

  private delete(vault: VaultState, caller: Caller, name: string): unknown {
    this.authorize(vault, caller, 'delete', name);
    const secret = this.existing(vault, name, '');
    vault.secrets.delete(name.toLowerCase());
    const vaultUrl = KeyVaultApi.vaultUrl(vault.name);
    const now = unixNow(this.clock);
    const deleted = { secret, deletedDate: now, scheduledPurgeDate: now + RETENTION_DAYS * 86_400 };
    if (vault.softDelete) vault.deleted.set(name.toLowerCase(), deleted);
    return { ...bundle(vaultUrl, secret, secret.versions.at(-1)!, vault, false), ...(vault.softDelete ? deletion(vaultUrl, deleted) : {}) };
  }

  private existing(vault: VaultState, name: string, version: string): StoredSecret {
    const secret = vault.secret(name);
    if (!secret) throw notFound(name, version);
    return secret;
  }

  private version(secret: StoredSecret, name: string, version: string): StoredVersion {
    if (version === '') return secret.versions.at(-1)!;
    const stored = VERSION.test(version) ? secret.versions.find((v) => v.version === version.toLowerCase()) : undefined;
    if (!stored) throw notFound(name, version);
    return stored;
  }

  /** Refuses what the caller may not do, in the words of the vault's permission model. */
  private authorize(vault: VaultState, caller: Caller, action: SecretDataAction, secret: string | undefined): void {
    if (!vault.isDenied(action, caller.objectId, secret)) return;
    const who = `appid=${caller.appId};oid=${caller.objectId};iss=https://sts.windows.net/${caller.tenantId}/`;
    if (vault.permissionModel === 'rbac') {
      const resource = `/subscriptions/00000000-0000-0000-0000-000000000000/resourcegroups/token-rotator/providers/microsoft.keyvault/vaults/${vault.name}${secret ? `/secrets/${secret}` : ''}`;
      throw new KeyVaultError(
        403,
        'Forbidden',
        `Caller is not authorized to perform action on resource.\r\nIf role assignments, deny assignments or role definitions were changed recently, please observe propagation time.\r\n` +
          `Caller: ${who}\r\nAction: '${RBAC_ACTION[action]}'\r\nResource: '${resource}'\r\nAssignment: (not found)\r\n` +
          `DenyAssignmentId: null\r\nDecisionReason: 'DeniedWithNoValidRBAC' \r\nVault: ${vault.name};location=${vault.location}\r\n`,
        'ForbiddenByRbac',
      );
    }
    throw new KeyVaultError(
      403,
      'Forbidden',
      `The user, group or application '${who}' does not have secrets ${ACCESS_POLICY_PERMISSION[action]} permission on key vault '${vault.name};location=${vault.location}'. ` +
        'For help resolving this issue, please see https://go.microsoft.com/fwlink/?linkid=2125287',
      'AccessDenied',
    );
  }

  /** A page of a listing: `maxresults` (1 to 25) items, and a nextLink with a skip token while more remain. */
  private page(items: unknown[], url: URL, base: string): { value: unknown[]; nextLink: string | null } {
    const max = url.searchParams.has('maxresults') ? Number(url.searchParams.get('maxresults')) : PAGE_SIZE;
    if (!Number.isInteger(max) || max < 1 || max > PAGE_SIZE) {
      throw new KeyVaultError(400, 'BadParameter', `Invalid value for maxresults: it must be between 1 and ${PAGE_SIZE}.`);
    }
    const skip = url.searchParams.has('$skiptoken') ? Number(Buffer.from(url.searchParams.get('$skiptoken')!, 'base64url').toString()) : 0;
    const value = items.slice(skip, skip + max);
    const more = skip + max < items.length;
    const next = new URL(base);
    next.searchParams.set('api-version', url.searchParams.get('api-version')!);
    next.searchParams.set('$skiptoken', Buffer.from(String(skip + max)).toString('base64url'));
    next.searchParams.set('maxresults', String(max));
    return { value, nextLink: more ? next.toString() : null };
  }
}

const methodNotAllowed = () => new KeyVaultError(405, 'MethodNotAllowed', 'The requested method is not allowed on this resource.');

function notFound(name: string, version: string): KeyVaultError {
  const nameId = version ? `${name}/${version}` : name;
  return new KeyVaultError(
    404,
    'SecretNotFound',
    `A secret with (name/id) ${nameId} was not found in this key vault. If you recently deleted this secret you may be able to recover it using the correct recovery command. For help resolving this issue, please see https://go.microsoft.com/fwlink/?linkid=2125182`,
  );
}

function parseBody(raw: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(raw);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw new KeyVaultError(400, 'BadParameter', 'The request body is not a valid JSON object.');
}

function validTags(tags: unknown): Record<string, string> | undefined {
  if (tags === undefined || tags === null) return undefined;
  if (typeof tags !== 'object' || Array.isArray(tags)) throw new KeyVaultError(400, 'BadParameter', 'Tags must be an object of strings.');
  const entries = Object.entries(tags as Record<string, unknown>);
  if (entries.length > MAX_TAGS) throw new KeyVaultError(400, 'BadParameter', `Too many tags: a secret may have at most ${MAX_TAGS}.`);
  for (const [key, value] of entries) {
    if (typeof value !== 'string') throw new KeyVaultError(400, 'BadParameter', `The value of tag ${key} must be a string.`);
    if (key.length > 512 || value.length > 256) {
      throw new KeyVaultError(400, 'BadParameter', `Tag ${key.slice(0, 64)} is too long: names have at most 512 characters, values 256.`);
    }
  }
  return Object.fromEntries(entries) as Record<string, string>;
}

function validContentType(contentType: unknown): string | undefined {
  if (contentType === undefined || contentType === null) return undefined;
  if (typeof contentType !== 'string' || contentType.length > 255) {
    throw new KeyVaultError(400, 'BadParameter', 'contentType must be a string of at most 255 characters.');
  }
  return contentType;
}

function validAttributes(attributes: unknown): { enabled?: boolean; nbf?: number; exp?: number } {
  if (attributes === undefined || attributes === null) return {};
  if (typeof attributes !== 'object') throw new KeyVaultError(400, 'BadParameter', 'attributes must be an object.');
  const a = attributes as Record<string, unknown>;
  for (const key of ['nbf', 'exp'] as const) {
    if (a[key] !== undefined && a[key] !== null && !Number.isInteger(a[key])) {
      throw new KeyVaultError(400, 'BadParameter', `attributes.${key} must be a Unix time in seconds.`);
    }
  }
  if (a.enabled !== undefined && a.enabled !== null && typeof a.enabled !== 'boolean') {
    throw new KeyVaultError(400, 'BadParameter', 'attributes.enabled must be a boolean.');
  }
  return {
    ...(typeof a.enabled === 'boolean' ? { enabled: a.enabled } : {}),
    ...(typeof a.nbf === 'number' ? { nbf: a.nbf } : {}),
    ...(typeof a.exp === 'number' ? { exp: a.exp } : {}),
  };
}

const numeric = (a: { nbf?: number; exp?: number }) => ({
  ...(a.nbf !== undefined ? { nbf: a.nbf } : {}),
  ...(a.exp !== undefined ? { exp: a.exp } : {}),
});

function attributesOf(version: StoredVersion, vault?: VaultState): Record<string, unknown> {
  return {
    enabled: version.enabled,
    ...(version.nbf !== undefined ? { nbf: version.nbf } : {}),
    ...(version.exp !== undefined ? { exp: version.exp } : {}),
    created: version.created,
    updated: version.updated,
    ...(vault ? { recoveryLevel: vault.recoveryLevel, ...(vault.softDelete ? { recoverableDays: RETENTION_DAYS } : {}) } : {}),
  };
}

/** A SecretBundle: the value only where the operation returns it (get and set). */
function bundle(
  vaultUrl: string,
  secret: StoredSecret,
  version: StoredVersion,
  vault: VaultState,
  withValue: boolean,
): Record<string, unknown> {
  return {
    ...(withValue ? { value: version.value } : {}),
    ...(version.contentType !== undefined ? { contentType: version.contentType } : {}),
    id: `${vaultUrl}/secrets/${secret.name}/${version.version}`,
    attributes: attributesOf(version, vault),
    ...(version.tags ? { tags: version.tags } : {}),
  };
}

/** A SecretItem of a listing: no value, and the secret's id without a version when listing secrets. */
function item(vaultUrl: string, secret: StoredSecret, version: StoredVersion, withVersion: boolean): Record<string, unknown> {
  return {
    id: `${vaultUrl}/secrets/${secret.name}${withVersion ? `/${version.version}` : ''}`,
    attributes: attributesOf(version),
    ...(version.tags ? { tags: version.tags } : {}),
    ...(version.contentType !== undefined ? { contentType: version.contentType } : {}),
  };
}

function deletion(
  vaultUrl: string,
  deleted: { secret: StoredSecret; deletedDate: number; scheduledPurgeDate: number },
): Record<string, unknown> {
  return {
    recoveryId: `${vaultUrl}/deletedsecrets/${deleted.secret.name}`,
    deletedDate: deleted.deletedDate,
    scheduledPurgeDate: deleted.scheduledPurgeDate,
  };
}

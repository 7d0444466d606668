import { randomBytes, randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

import { selfSignedCertificate } from 'token-rotator-kubernetes-double/self-signed-certificate';

import { type Clock, systemClock } from '../../../src/clock.js';
import { isLoopbackHost } from '../../../src/common/loopback.js';
import { Acl, type Capability, DEFAULT_POLICY, parsePolicy, type PolicyRule } from './acl.js';
import { type Answer, KvEngine, type KvSecret } from './kv2.js';

/*
 * A Vault (or OpenBao) server double on loopback, for the vault sink's tests: the HTTP API of the
 * calls a KV version 2 client makes, with Vault's envelopes, status codes and error texts. See
 * README.md beside this file for what it implements and what it simplifies.
 */

export interface VaultDoubleOptions {
  /** A loopback address; 127.0.0.1 when absent. */
  host?: string;
  /** Serve https with a self-signed certificate (`ca`) instead of plain http. */
  tls?: boolean;
  /** Namespaces besides the root one (''), as `X-Vault-Namespace` names them. */
  namespaces?: string[];
  clock?: Clock;
}

/** One request as the double saw it: never a body, never a header value. */
export interface RecordedVaultRequest {
  method: string;
  /** The API path after `/v1/`, without the query. */
  path: string;
  namespace: string;
  /** The ACL operation it was checked as, when it was: `create`, `update`, `read`, `patch`... */
  operation?: Capability;
  /** `version` of a data read, when asked. */
  query: Record<string, string>;
  status: number;
}

export interface TokenEntry {
  accessor: string;
  namespace: string;
  policies: string[];
  displayName: string;
  path: string;
  meta: Record<string, string> | null;
  /** Epoch ms; 0 for a token created with ttl 0 (no expiry, like a root token). */
  createdAt: number;
  ttlSeconds: number;
}

interface KubernetesRole {
  boundServiceAccountNames: string[];
  boundServiceAccountNamespaces: string[];
  policies: string[];
  ttlSeconds: number;
}

interface AppRole {
  roleId: string;
  secretIds: Set<string>;
  policies: string[];
  ttlSeconds: number;
}

type AuthMount =
  { type: 'kubernetes'; roles: Map<string, KubernetesRole> } | { type: 'approle'; roles: Map<string, AppRole> } | { type: 'token' };

interface SecretsMount {
  path: string;
  type: 'kv';
  version: 1 | 2;
  accessor: string;
  uuid: string;
  engine: KvEngine;
  /** KV version 1: the data of each path. */
  v1: Map<string, Record<string, unknown>>;
}

interface NamespaceState {
  mounts: Map<string, SecretsMount>;
  auth: Map<string, AuthMount>;
  policies: Map<string, PolicyRule[]>;
}

/** Where a secret lives: `{ mount: 'secret', path: 'apps/ingest' }`, in the root namespace unless said. */
export interface SecretAddress {
  mount?: string;
  path: string;
  namespace?: string;
}

export interface VaultDouble {
  /** `http://127.0.0.1:port` (or https with `tls`). */
  url: string;
  /** PEM of the certificate the https side presents (its own CA); undefined for plain http. */
  ca: string | undefined;
  /** A token with the root policy, in the root namespace. */
  rootToken: string;
  /** Every request, in order. */
  requests: RecordedVaultRequest[];
  /** For tests that need something to happen between two requests (another writer, a revoked token). */
  hooks: { beforeHandle?: (request: RecordedVaultRequest) => void };
  /** Enables a KV engine at `path` (version 2 unless said), like `vault secrets enable -path=… kv-v2`. */
  mount(path: string, options?: { version?: 1 | 2; namespace?: string; casRequired?: boolean; maxVersions?: number }): void;
  /** Writes a policy from its HCL, like `vault policy write`. */
  policy(name: string, hcl: string, namespace?: string): void;
  /** A token with these policies (and `default`), like `vault token create -policy=…`. */
  token(options: { policies: string[]; ttlSeconds?: number; namespace?: string; noDefaultPolicy?: boolean }): string;
  /** Seals the double: every request but to sys/ is answered 503 "Vault is sealed", as a sealed Vault does. */
  seal(): void;
  unseal(): void;
  /** Revokes a token at once, as its expiry would. */
  revoke(token: string): void;
  /** Revokes every token a login made: they expired early, as far as a client can tell. */
  revokeLogins(): number;
  /** Tokens alive now, for tests (never logged). */
  tokens(): Array<{ token: string } & TokenEntry>;
  kubernetes: {
    /** Enables the kubernetes auth method at `auth/<mount>` (default `kubernetes`). */
    enable(options?: { mount?: string; namespace?: string }): void;
    /** Like `vault write auth/kubernetes/role/<name> bound_service_account_names=… policies=… ttl=…`. */
    role(
      name: string,
      role: { boundServiceAccountNames: string[]; boundServiceAccountNamespaces: string[]; policies: string[]; ttlSeconds?: number },
      options?: { mount?: string; namespace?: string },
    ): void;
    /**
     * A service account token (a JWT) the double's own TokenReview accepts, as a pod finds it in
     * /var/run/secrets/kubernetes.io/serviceaccount/token.
     */
    serviceAccountToken(namespace: string, name: string): string;
  };
  approle: {
    enable(options?: { mount?: string; namespace?: string }): void;
    /** A role and one secret id for it, like `vault write auth/approle/role/<name> …` and `…/secret-id`. */
    role(
      name: string,
      role: { policies: string[]; ttlSeconds?: number },
      options?: { mount?: string; namespace?: string },
    ): { roleId: string; secretId: string };
  };
  /** The stored secrets, without API rules. */
  kv: {
    /** A copy of a secret's state, or undefined. */
    get(at: SecretAddress): StoredSecret | undefined;
    /** How many versions the secret has had (its current version number); 0 when missing. */
    versions(at: SecretAddress): number;
    /** Writes a version as another tool would (`vault kv put`, no check-and-set, no custom metadata). */
    put(at: SecretAddress, data: Record<string, unknown>): number;
    /** Sets custom metadata, cas_required or max_versions, as `vault kv metadata put` would. */
    setMetadata(
      at: SecretAddress,
      metadata: { customMetadata?: Record<string, string>; casRequired?: boolean; maxVersions?: number },
    ): void;
    /** `vault kv delete`: soft-deletes the latest version. */
    deleteLatest(at: SecretAddress): void;
    /** `vault kv destroy -versions=<latest>`. */
    destroyLatest(at: SecretAddress): void;
  };
  close(): Promise<void>;
}

export interface StoredSecret {
  currentVersion: number;
  /** The latest version's data (undefined when deleted or destroyed). */
  data: Record<string, unknown> | undefined;
  customMetadata: Record<string, string> | null;
  casRequired: boolean;
  maxVersions: number;
  /** The data of each version still kept, by number. */
  history: Map<number, Record<string, unknown> | null>;
}

const MAX_REQUEST_BYTES = 32 * 1024 * 1024;
const PERMISSION_DENIED = 'permission denied';

export async function startVaultDouble(options: VaultDoubleOptions = {}): Promise<VaultDouble> {
  const host = options.host ?? '127.0.0.1';
  if (!isLoopbackHost(host.includes(':') ? `[${host}]` : host)) throw new Error(`the Vault double listens on loopback only, not ${host}`);
  const clock = options.clock ?? systemClock;
  const now = () => clock.now();
  const requests: RecordedVaultRequest[] = [];
  const hooks: VaultDouble['hooks'] = {};
  let sealed = false;
  const namespaces = new Map<string, NamespaceState>();
  for (const ns of ['', ...(options.namespaces ?? [])]) {
    namespaces.set(ns, { mounts: new Map(), auth: new Map([['token', { type: 'token' }]]), policies: new Map() });
  }
  const tokens = new Map<string, TokenEntry>();
  /** JWTs the double's TokenReview accepts: the service account each stands for. */
  const serviceAccounts = new Map<string, { namespace: string; name: string; uid: string }>();

  const nsState = (ns = ''): NamespaceState => {
    const state = namespaces.get(ns);
    if (!state) throw new Error(`the double has no namespace ${JSON.stringify(ns)}`);
    return state;
  };

  function issueToken(entry: Omit<TokenEntry, 'accessor' | 'createdAt'>): string {
    const token = `hvs.${randomBytes(18).toString('base64url')}`;
    tokens.set(token, { ...entry, accessor: randomBytes(12).toString('base64url'), createdAt: now().getTime() });
    return token;
  }

  /** The token's entry, or undefined when unknown, expired (revoked on the way) or of another namespace. */
  function lookupToken(token: string | undefined, ns: string): TokenEntry | undefined {
    if (!token) return undefined;
    const entry = tokens.get(token);
    if (!entry) return undefined;
    if (entry.ttlSeconds > 0 && entry.createdAt + entry.ttlSeconds * 1000 <= now().getTime()) {
      tokens.delete(token);
      return undefined;
    }
    return entry.namespace === ns ? entry : undefined;
  }

  function aclOf(entry: TokenEntry): Acl {
    if (entry.policies.includes('root')) return new Acl([], { root: true });
    const state = nsState(entry.namespace);
    const rules = entry.policies.flatMap((name) =>
      name === 'default' ? parsePolicy(DEFAULT_POLICY).concat(state.policies.get('default') ?? []) : (state.policies.get(name) ?? []),
    );
    return new Acl(rules);
  }

  function findMount(state: NamespaceState, path: string): { mount: SecretsMount; rest: string } | undefined {
    let best: SecretsMount | undefined;
    for (const mount of state.mounts.values()) {
      if ((path === mount.path || path.startsWith(`${mount.path}/`)) && (!best || mount.path.length > best.path.length)) best = mount;
    }
    return best ? { mount: best, rest: path.slice(best.path.length + 1) } : undefined;
  }

  const rootToken = issueToken({
    namespace: '',
    policies: ['root'],
    displayName: 'root',
    path: 'auth/token/root',
    meta: null,
    ttlSeconds: 0,
  });

  /** Answers one request: the route, the ACL check (create or update by whether the path exists), the handler. */
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://double');
    const method = req.method ?? 'GET';
    const ns = (req.headers['x-vault-namespace'] as string | undefined)?.replace(/^\/+|\/+$/g, '') ?? '';
    const record: RecordedVaultRequest = {
      method,
      path: url.pathname.replace(/^\/v1\//, ''),
      namespace: ns,
      query: Object.fromEntries([...url.searchParams].filter(([k]) => k === 'version' || k === 'list')),
      status: 0,
    };
    requests.push(record);
    hooks.beforeHandle?.(record);
    const send = (answer: Answer, mountType?: string) => {
      record.status = answer.status;
      respond(res, answer, mountType);
    };

    if (!url.pathname.startsWith('/v1/')) return send({ status: 404, errors: [] });
    if (sealed && !url.pathname.startsWith('/v1/sys/')) return send({ status: 503, errors: ['Vault is sealed'] });
    const path = decodeURIComponent(url.pathname.slice('/v1/'.length)).replace(/\/+$/, '');
    const bodyText = await readBody(req);
    if (bodyText === undefined) return send({ status: 413, errors: ['http: request body too large'] });
    let body: Record<string, unknown> = {};
    if (['POST', 'PUT', 'PATCH'].includes(method)) {
      if (method === 'PATCH') {
        const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
        if (type !== 'application/merge-patch+json') {
          return send({ status: 415, errors: [`PATCH requires Content-Type of application/merge-patch+json, provided ${type}`] });
        }
      }
      if (bodyText.trim() !== '') {
        try {
          const parsed: unknown = JSON.parse(bodyText);
          if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
          body = parsed as Record<string, unknown>;
        } catch (error) {
          return send({ status: 400, errors: [`failed to parse JSON input: ${(error as Error).message}`] });
        }
      }
    }
    const state = namespaces.get(ns);
    const tokenHeader = (req.headers['x-vault-token'] as string | undefined) ?? bearer(req.headers.authorization);

    // Unauthenticated paths: logins, and the mount look-up that checks the token itself.
    const login = /^auth\/(.+)\/login$/.exec(path);
    if (login && method !== 'GET') {
      const auth = state?.auth.get(login[1]!);
      if (!state || !auth) return send({ status: 404, errors: [`no handler for route ${JSON.stringify(path)}. route entry not found.`] });
      return send(loginAnswer(auth, login[1]!, body, ns));
    }
    if (path.startsWith('sys/internal/ui/mounts/') && method === 'GET') {
      const entry = lookupToken(tokenHeader, ns);
      if (!state || !entry) return send({ status: 403, errors: [PERMISSION_DENIED] });
      return send(uiMount(state, path.slice('sys/internal/ui/mounts/'.length), aclOf(entry)));
    }

    const entry = state ? lookupToken(tokenHeader, ns) : undefined;
    if (!state || !entry) return send({ status: 403, errors: [PERMISSION_DENIED] });

    const route = routeOf(state, path, method, url.searchParams);
    record.operation = route.operation;
    if (!aclOf(entry).allows(path, route.operation)) {
      return send({ status: 403, errors: [`1 error occurred:\n\t* ${PERMISSION_DENIED}\n\n`] });
    }
    send(route.handle(body, tokenHeader!, entry), route.mountType);
  }

  interface Route {
    operation: Capability;
    mountType?: string;
    handle(body: Record<string, unknown>, token: string, entry: TokenEntry): Answer;
  }

  /** Which handler a request goes to, and the ACL operation it needs (POST: create or update, by existence). */
  function routeOf(state: NamespaceState, path: string, method: string, query: URLSearchParams): Route {
    const isList = method === 'LIST' || (method === 'GET' && query.get('list') === 'true');
    const writeOp = (exists: boolean): Capability => (method === 'PATCH' ? 'patch' : exists ? 'update' : 'create');
    const opFor = (exists: boolean): Capability =>
      isList ? 'list' : method === 'GET' ? 'read' : method === 'DELETE' ? 'delete' : writeOp(exists);
    const unsupported = (): Answer => ({ status: 405, errors: ['unsupported operation'] });

    if (path === 'sys/capabilities-self') {
      return {
        operation: 'update',
        handle: (body, _token, entry) => {
          if (method !== 'POST' && method !== 'PUT') return unsupported();
          const raw = body.paths ?? body.path;
          const paths = (Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',') : []).map(String);
          if (paths.length === 0) return { status: 400, errors: ['paths must be supplied'] };
          const acl = aclOf(entry);
          const data: Record<string, string[]> = Object.fromEntries(paths.map((p) => [p, acl.capabilities(p)]));
          if (paths.length === 1) data.capabilities = data[paths[0]!]!;
          return { status: 200, data: { ...data, __sys: true } };
        },
      };
    }
    if (path === 'auth/token/lookup-self') {
      return {
        operation: method === 'GET' ? 'read' : 'update',
        handle: (_body, token, entry) => ({ status: 200, data: lookupSelf(token, entry) }),
      };
    }
    if (path === 'auth/token/revoke-self') {
      return {
        operation: 'update',
        handle: (_body, token) => {
          tokens.delete(token);
          return { status: 204 };
        },
      };
    }
    const found = findMount(state, path);
    if (!found) {
      return {
        operation: opFor(false),
        handle: () => ({ status: 404, errors: [`no handler for route ${JSON.stringify(path)}. route entry not found.`] }),
      };
    }
    const { mount, rest } = found;
    if (mount.version === 1) {
      const exists = mount.v1.has(rest);
      return {
        operation: opFor(exists),
        mountType: 'kv',
        handle: (body) => {
          if (method === 'GET') return exists ? { status: 200, data: mount.v1.get(rest) } : { status: 404, errors: [] };
          if (method === 'DELETE') mount.v1.delete(rest);
          else mount.v1.set(rest, body);
          return { status: 204 };
        },
      };
    }
    const engine = mount.engine;
    const [kind, ...restParts] = rest.split('/');
    const secretPath = restParts.join('/');
    const exists = engine.exists(secretPath);
    switch (kind) {
      case 'data':
        return {
          operation: opFor(exists),
          mountType: 'kv',
          handle: (body) => {
            switch (method) {
              case 'GET':
                return engine.readData(secretPath, query.has('version') ? Number(query.get('version')) : undefined);
              case 'POST':
              case 'PUT':
                return engine.writeData(secretPath, body);
              case 'DELETE':
                return engine.deleteLatest(secretPath);
              default:
                return unsupported();
            }
          },
        };
      case 'metadata':
        return {
          operation: opFor(exists),
          mountType: 'kv',
          handle: (body) => {
            switch (method) {
              case 'GET':
                return engine.readMetadata(secretPath);
              case 'POST':
              case 'PUT':
                return engine.writeMetadata(secretPath, body);
              case 'PATCH':
                return engine.patchMetadata(secretPath, body);
              case 'DELETE':
                return engine.deleteMetadata(secretPath);
              default:
                return unsupported();
            }
          },
        };
      case 'config':
        return {
          operation: opFor(true),
          mountType: 'kv',
          handle: (body) => (method === 'GET' ? engine.readConfig() : engine.writeConfig(body)),
        };
      default:
        return {
          operation: opFor(false),
          handle: () => ({ status: 404, errors: [`no handler for route ${JSON.stringify(path)}. route entry not found.`] }),
        };
    }
  }

  function lookupSelf(token: string, entry: TokenEntry) {
    const created = Math.floor(entry.createdAt / 1000);
    const remaining =
      entry.ttlSeconds > 0 ? Math.max(0, Math.floor((entry.createdAt + entry.ttlSeconds * 1000 - now().getTime()) / 1000)) : 0;
    return {
      accessor: entry.accessor,
      creation_time: created,
      creation_ttl: entry.ttlSeconds,
      display_name: entry.displayName,
      entity_id: '',
      expire_time: entry.ttlSeconds > 0 ? new Date(entry.createdAt + entry.ttlSeconds * 1000).toISOString() : null,
      explicit_max_ttl: 0,
      id: token,
      issue_time: new Date(entry.createdAt).toISOString(),
      meta: entry.meta,
      num_uses: 0,
      orphan: true,
      path: entry.path,
      policies: entry.policies,
      renewable: entry.ttlSeconds > 0,
      ttl: remaining,
      type: 'service',
    };
  }

  /** POST auth/<mount>/login for the kubernetes and approle methods: an `auth` block, or Vault's refusal. */
  function loginAnswer(auth: AuthMount, mountPath: string, body: Record<string, unknown>, ns: string): Answer {
    const issued = (policies: string[], ttlSeconds: number, meta: Record<string, string>, displayName: string): Answer => {
      const all = ['default', ...policies.filter((p) => p !== 'default')].sort();
      const token = issueToken({ namespace: ns, policies: all, displayName, path: `auth/${mountPath}/login`, meta, ttlSeconds });
      const entry = tokens.get(token)!;
      return {
        status: 200,
        data: null,
        auth: {
          client_token: token,
          accessor: entry.accessor,
          policies: all,
          token_policies: all,
          metadata: meta,
          lease_duration: ttlSeconds,
          renewable: true,
          entity_id: '',
          token_type: 'service',
          orphan: true,
          mfa_requirement: null,
          num_uses: 0,
        },
      };
    };
    switch (auth.type) {
      case 'kubernetes': {
        const roleName = typeof body.role === 'string' ? body.role : '';
        if (!roleName) return { status: 400, errors: ['missing role'] };
        const jwt = typeof body.jwt === 'string' ? body.jwt : '';
        if (!jwt) return { status: 400, errors: ['missing jwt'] };
        const role = auth.roles.get(roleName);
        if (!role) return { status: 400, errors: [`invalid role name ${JSON.stringify(roleName)}`] };
        const account = serviceAccounts.get(jwt);
        if (!account) return { status: 403, errors: [PERMISSION_DENIED] };
        const names = role.boundServiceAccountNames;
        if (!names.includes('*') && !names.includes(account.name)) return { status: 403, errors: ['service account name not authorized'] };
        const namespacesBound = role.boundServiceAccountNamespaces;
        if (!namespacesBound.includes('*') && !namespacesBound.includes(account.namespace))
          return { status: 403, errors: ['namespace not authorized'] };
        return issued(
          role.policies,
          role.ttlSeconds,
          {
            role: roleName,
            service_account_name: account.name,
            service_account_namespace: account.namespace,
            service_account_secret_name: '',
            service_account_uid: account.uid,
          },
          `${mountPath}-${account.namespace}-${account.name}`,
        );
      }
      case 'approle': {
        const roleId = typeof body.role_id === 'string' ? body.role_id : '';
        if (!roleId) return { status: 400, errors: ['missing role_id'] };
        const found = [...auth.roles].find(([, r]) => r.roleId === roleId);
        if (!found) return { status: 400, errors: ['invalid role or secret ID'] };
        const secretId = typeof body.secret_id === 'string' ? body.secret_id : '';
        if (!secretId) return { status: 400, errors: ['missing secret_id'] };
        if (!found[1].secretIds.has(secretId)) return { status: 400, errors: ['invalid role or secret ID'] };
        return issued(found[1].policies, found[1].ttlSeconds, { role_name: found[0] }, mountPath);
      }
      case 'token':
        return { status: 405, errors: ['unsupported operation'] };
    }
  }

  /** GET sys/internal/ui/mounts/<path>: the mount's type and options, if the token may see it. */
  function uiMount(state: NamespaceState, path: string, acl: Acl): Answer {
    const sanitized = path.endsWith('/') ? path : `${path}/`;
    const denied: Answer = {
      status: 403,
      errors: [
        `preflight capability check returned 403, please ensure client's policies grant access to path ${JSON.stringify(sanitized)}`,
      ],
    };
    const found = findMount(state, sanitized.slice(0, -1));
    if (!found || !acl.seesMount(`${found.mount.path}/`)) return denied;
    const m = found.mount;
    return {
      status: 200,
      data: {
        type: 'kv',
        description: '',
        accessor: m.accessor,
        local: false,
        seal_wrap: false,
        external_entropy_access: false,
        options: { version: String(m.version) },
        uuid: m.uuid,
        plugin_version: '',
        running_plugin_version: 'v0.20.0+builtin',
        running_sha256: '',
        config: { default_lease_ttl: 0, max_lease_ttl: 0, force_no_cache: false },
        path: `${m.path}/`,
        __sys: true,
      },
    };
  }

  const tls = options.tls
    ? selfSignedCertificate(
        [...new Set(['127.0.0.1', '::1', host])].filter((h) => h !== 'localhost'),
        ['localhost'],
        'token-rotator-vault-double',
      )
    : undefined;
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' }).end('{"errors":["internal error"]}\n');
      else res.destroy();
    });
  };
  const server: Server = tls ? createHttpsServer({ cert: tls.cert, key: tls.key }, listener) : createHttpServer(listener);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `${tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;

  const engineAt = (at: SecretAddress): KvEngine => {
    const mount = nsState(at.namespace).mounts.get(at.mount ?? 'secret');
    if (!mount || mount.version !== 2) throw new Error(`the double has no KV v2 mount ${at.mount ?? 'secret'}`);
    return mount.engine;
  };
  const authMount = <T extends AuthMount['type']>(type: T, mount: string, ns?: string) => {
    const auth = nsState(ns).auth.get(mount);
    if (auth?.type !== type) throw new Error(`no ${type} auth method at auth/${mount}`);
    return auth as Extract<AuthMount, { type: T }>;
  };

  return {
    url,
    ca: tls?.cert,
    rootToken,
    requests,
    hooks,
    mount(path, mountOptions = {}) {
      const state = nsState(mountOptions.namespace);
      const engine = new KvEngine(now);
      engine.config.casRequired = mountOptions.casRequired ?? false;
      engine.config.maxVersions = mountOptions.maxVersions ?? 0;
      state.mounts.set(path, {
        path,
        type: 'kv',
        version: mountOptions.version ?? 2,
        accessor: `kv_${randomBytes(4).toString('hex')}`,
        uuid: randomUUID(),
        engine,
        v1: new Map(),
      });
    },
    policy(name, hcl, namespace) {
      nsState(namespace).policies.set(name, parsePolicy(hcl));
    },
    token({ policies, ttlSeconds = 0, namespace = '', noDefaultPolicy = false }) {
      nsState(namespace);
      const all = noDefaultPolicy || policies.includes('root') ? policies : ['default', ...policies.filter((p) => p !== 'default')];
      return issueToken({ namespace, policies: all, displayName: 'token', path: 'auth/token/create', meta: null, ttlSeconds });
    },
    seal() {
      sealed = true;
    },
    unseal() {
      sealed = false;
    },
    revoke(token) {
      tokens.delete(token);
    },
    revokeLogins() {
      let n = 0;
      for (const [token, entry] of tokens) {
        if (entry.path.endsWith('/login')) {
          tokens.delete(token);
          n++;
        }
      }
      return n;
    },
    tokens: () => [...tokens].map(([token, entry]) => ({ token, ...entry })),
    kubernetes: {
      enable({ mount = 'kubernetes', namespace } = {}) {
        nsState(namespace).auth.set(mount, { type: 'kubernetes', roles: new Map() });
      },
      role(name, role, { mount = 'kubernetes', namespace } = {}) {
        authMount('kubernetes', mount, namespace).roles.set(name, {
          boundServiceAccountNames: role.boundServiceAccountNames,
          boundServiceAccountNamespaces: role.boundServiceAccountNamespaces,
          policies: role.policies,
          ttlSeconds: role.ttlSeconds ?? 3600,
        });
      },
      serviceAccountToken(namespace, name) {
        const segment = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
        const jwt = [
          segment({ alg: 'RS256', kid: randomBytes(8).toString('hex') }),
          segment({
            iss: 'https://kubernetes.default.svc.cluster.local',
            sub: `system:serviceaccount:${namespace}:${name}`,
            aud: ['https://kubernetes.default.svc.cluster.local'],
            exp: Math.floor(now().getTime() / 1000) + 3600,
          }),
          randomBytes(64).toString('base64url'),
        ].join('.');
        serviceAccounts.set(jwt, { namespace, name, uid: randomUUID() });
        return jwt;
      },
    },
    approle: {
      enable({ mount = 'approle', namespace } = {}) {
        nsState(namespace).auth.set(mount, { type: 'approle', roles: new Map() });
      },
      role(name, role, { mount = 'approle', namespace } = {}) {
        const roleId = randomUUID();
        const secretId = randomUUID();
        authMount('approle', mount, namespace).roles.set(name, {
          roleId,
          secretIds: new Set([secretId]),
          policies: role.policies,
          ttlSeconds: role.ttlSeconds ?? 3600,
        });
        return { roleId, secretId };
      },
    },
    kv: {
      get(at) {
        const secret: KvSecret | undefined = engineAt(at).secrets.get(at.path);
        if (!secret) return undefined;
        const parse = (n: number) => {
          const v = secret.versions.get(n);
          return v && !v.destroyed && !v.deletionTime ? (JSON.parse(v.data) as Record<string, unknown>) : undefined;
        };
        return {
          currentVersion: secret.currentVersion,
          data: parse(secret.currentVersion),
          customMetadata: secret.customMetadata ? { ...secret.customMetadata } : null,
          casRequired: secret.casRequired,
          maxVersions: secret.maxVersions,
          history: new Map([...secret.versions.keys()].map((n) => [n, parse(n) ?? null])),
        };
      },
      versions: (at) => engineAt(at).secrets.get(at.path)?.currentVersion ?? 0,
      put: (at, data) => engineAt(at).put(at.path, data),
      setMetadata(at, metadata) {
        const answer = engineAt(at).writeMetadata(at.path, {
          ...(metadata.customMetadata ? { custom_metadata: metadata.customMetadata } : {}),
          ...(metadata.casRequired !== undefined ? { cas_required: metadata.casRequired } : {}),
          ...(metadata.maxVersions !== undefined ? { max_versions: metadata.maxVersions } : {}),
        });
        if (answer.status >= 300) throw new Error(answer.errors?.join('; '));
      },
      deleteLatest: (at) => void engineAt(at).deleteLatest(at.path),
      destroyLatest(at) {
        const engine = engineAt(at);
        engine.destroyVersions(at.path, [engine.secrets.get(at.path)?.currentVersion ?? 0]);
      },
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function bearer(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(.+)$/i.exec(header ?? '');
  return match?.[1];
}

/** The body as text, or undefined past Vault's default max_request_size. */
async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_REQUEST_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Vault's envelope: `{request_id, lease_id, renewable, lease_duration, data, wrap_info, warnings,
 * auth}` for an answer, `{errors: [...]}` for a failure, nothing for 204. A `sys/` answer also has
 * its data at the top level (Vault's HTTPSysInjector).
 */
function respond(res: ServerResponse, answer: Answer, mountType?: string): void {
  if (answer.status === 204) {
    res.writeHead(204).end();
    return;
  }
  let body: unknown;
  if (answer.errors) {
    body = { errors: answer.errors };
  } else {
    const raw = answer.dataWith404 ?? answer.data ?? null;
    const sys = raw && typeof raw === 'object' && '__sys' in raw;
    const data = sys ? Object.fromEntries(Object.entries(raw).filter(([k]) => k !== '__sys')) : raw;
    body = {
      request_id: randomUUID(),
      lease_id: '',
      renewable: false,
      lease_duration: 0,
      data,
      wrap_info: null,
      warnings: answer.warnings ?? null,
      auth: answer.auth ?? null,
      ...(mountType ? { mount_type: mountType } : {}),
      ...(sys ? (data as object) : {}),
    };
  }
  res.writeHead(answer.status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(`${JSON.stringify(body)}\n`);
}

import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { connect, type Socket } from 'node:net';

import { selfSignedCertificate } from 'token-rotator-kubernetes-double/self-signed-certificate';

import { type Clock, systemClock } from '../../../src/clock.js';
import { type AppRegistration, AUTHORITY_HOST, EntraId, json, type RecordedTokenRequest } from './entra-id.js';
import { KeyVaultApi, type RecordedVaultRequest, VAULT_DOMAIN } from './key-vault-api.js';
import { type Denial, type PermissionModel, type StoredVersion, VaultState } from './key-vault-store.js';

/*
 * Azure Key Vault and Microsoft Entra ID on loopback, under their real names. The SDK's challenge
 * policy only accepts a challenge whose resource (https://vault.azure.net) is a parent domain of the
 * vault's host, and MSAL trusts login.microsoftonline.com without instance discovery: so the double
 * serves `https://<vault>.vault.azure.net` and `https://login.microsoftonline.com` over real TLS,
 * with a self-signed CA the client is told to trust (NODE_EXTRA_CA_CERTS in a child process), and
 * is reached through an HTTP CONNECT proxy on loopback that the SDK's standard HTTPS_PROXY setting
 * points at. The proxy tunnels those names to the double and nothing else: nothing reaches Azure.
 */

export interface AzureKeyVaultDoubleOptions {
  /** The directory (tenant) id of Entra ID and of the vaults; random when absent. */
  tenantId?: string;
  /** The vaults to serve; one named `myvault` with RBAC and soft-delete when absent. */
  vaults?: { name: string; permissionModel?: PermissionModel; softDelete?: boolean; tenantId?: string }[];
  clock?: Clock;
}

/** One request to the proxy: a CONNECT to `host:port`, or a plain request it refused. */
export interface RecordedConnect {
  method: string;
  target: string;
  tunnelled: boolean;
}

export interface AzureKeyVaultDouble {
  tenantId: string;
  /** `http://127.0.0.1:<port>`: what HTTPS_PROXY must say for the SDK to reach the double. */
  proxyUrl: string;
  /** PEM of the CA (its own self-signed certificate) to trust: the content of NODE_EXTRA_CA_CERTS's file. */
  ca: string;
  entra: EntraId;
  /** `https://myvault.vault.azure.net`. */
  vaultUrl(name?: string): string;
  vault(name?: string): VaultState;
  /** Data-plane requests, in order, without bodies. */
  requests: RecordedVaultRequest[];
  /** Token requests, in order, without credentials. */
  tokenRequests: RecordedTokenRequest[];
  connects: RecordedConnect[];
  /** An app registration (a service principal) in the tenant, with a client secret and/or a federated credential. */
  registerApp(options?: { clientSecret?: boolean | string; serviceAccount?: string }): AppRegistration;
  /** Copies of a secret's versions, oldest first; empty when it does not exist. */
  versions(name: string, vault?: string): StoredVersion[];
  /** Stores a version as another writer would (`az keyvault secret set`): no API rules, no authorization. */
  plant(
    name: string,
    version: { value: string; tags?: Record<string, string>; contentType?: string; enabled?: boolean },
    vault?: string,
  ): StoredVersion;
  /** Soft-deletes a secret, as `az keyvault secret delete` does on a vault with soft-delete. */
  softDelete(name: string, vault?: string): void;
  deny(denial: Denial, vault?: string): void;
  close(): Promise<void>;
}

const MAX_BODY = 1024 * 1024;

export async function startAzureKeyVaultDouble(options: AzureKeyVaultDoubleOptions = {}): Promise<AzureKeyVaultDouble> {
  const clock = options.clock ?? systemClock;
  const tenantId = options.tenantId ?? randomUUID();
  const entra = await EntraId.create(tenantId, clock);
  const vaults = new Map<string, VaultState>();
  for (const v of options.vaults ?? [{ name: 'myvault' }]) {
    vaults.set(
      v.name.toLowerCase(),
      new VaultState(v.name.toLowerCase(), v.tenantId ?? tenantId, v.permissionModel ?? 'rbac', v.softDelete ?? true, 'westeurope'),
    );
  }
  const api = new KeyVaultApi(entra, clock);
  const vaultOfHost = (host: string) => {
    const match = new RegExp(`^([0-9a-z-]+)\\.${VAULT_DOMAIN.replace(/\./g, '\\.')}$`).exec(host.toLowerCase());
    return match ? vaults.get(match[1]!) : undefined;
  };

  const tls = selfSignedCertificate(['127.0.0.1'], [`*.${VAULT_DOMAIN}`, AUTHORITY_HOST], 'token-rotator-azure-double');
  const sockets = new Set<Socket>();
  const server = createHttpsServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    serve(req, res).catch(() => {
      if (!res.headersSent) json(res, 500, { error: { code: 'InternalServerError', message: 'double error' } });
      else res.destroy();
    });
  });
  server.on('connection', (socket: Socket) => track(sockets, socket));

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const host = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
    const url = new URL(req.url ?? '/', `https://${host}`);
    if (body === undefined) return json(res, 413, { error: { code: 'RequestTooLarge', message: 'The request is too large.' } });
    if (host === AUTHORITY_HOST) return entra.handle(req, res, url, body);
    const vault = vaultOfHost(host);
    if (vault) return api.handle(vault, req, res, url, body);
    json(res, 404, { error: { code: 'NotFound', message: `no such host: ${host}` } });
  }

  await listen(server);
  const tlsPort = (server.address() as { port: number }).port;

  const connects: RecordedConnect[] = [];
  const proxy = createHttpServer((req, res) => {
    // A plain request through the proxy (the managed identity probe of IMDS, for one): nothing is there.
    connects.push({ method: req.method ?? 'GET', target: req.url ?? '', tunnelled: false });
    res.writeHead(502, { 'content-type': 'text/plain', connection: 'close' }).end('no route to host');
  });
  proxy.on('connection', (socket: Socket) => track(sockets, socket));
  proxy.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    const target = req.url ?? '';
    const [host = '', port = ''] = target.split(/:(?=\d+$)/);
    const known = port === '443' && (host.toLowerCase() === AUTHORITY_HOST || vaultOfHost(host) !== undefined);
    connects.push({ method: 'CONNECT', target, tunnelled: known });
    client.on('error', () => client.destroy());
    if (!known) {
      // What a proxy answers when the name does not resolve.
      client.end(
        'HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\ncontent-length: 22\r\nconnection: close\r\n\r\ncannot resolve the host',
      );
      return;
    }
    const upstream = connect(tlsPort, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    track(sockets, upstream);
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await listen(proxy);
  const proxyPort = (proxy.address() as { port: number }).port;

  const vaultNamed = (name = 'myvault') => {
    const vault = vaults.get(name.toLowerCase());
    if (!vault) throw new Error(`the double serves no vault ${name}`);
    return vault;
  };

  return {
    tenantId,
    proxyUrl: `http://127.0.0.1:${proxyPort}`,
    ca: tls.cert,
    entra,
    vaultUrl: (name = 'myvault') => KeyVaultApi.vaultUrl(vaultNamed(name).name),
    vault: vaultNamed,
    requests: api.requests,
    tokenRequests: entra.tokenRequests,
    connects,
    registerApp: (appOptions) => entra.register(appOptions),
    versions: (name, vault) => structuredClone(vaultNamed(vault).secret(name)?.versions ?? []),
    plant: (name, version, vault) => {
      const state = vaultNamed(vault);
      return state.addVersion(
        state.secret(name)?.name ?? name,
        {
          value: version.value,
          enabled: version.enabled ?? true,
          ...(version.tags ? { tags: version.tags } : {}),
          ...(version.contentType ? { contentType: version.contentType } : {}),
        },
        Math.floor(clock.now().getTime() / 1000),
      );
    },
    softDelete: (name, vault) => {
      const state = vaultNamed(vault);
      const secret = state.secret(name);
      if (!secret) throw new Error(`no secret ${name} to delete`);
      state.secrets.delete(name.toLowerCase());
      const now = Math.floor(clock.now().getTime() / 1000);
      state.deleted.set(name.toLowerCase(), { secret, deletedDate: now, scheduledPurgeDate: now + 90 * 86_400 });
    },
    deny: (denial, vault) => {
      vaultNamed(vault).denials.push(denial);
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await Promise.all([close(server), close(proxy)]);
    },
  };
}

function track(sockets: Set<Socket>, socket: Socket): void {
  sockets.add(socket);
  socket.on('close', () => sockets.delete(socket));
}

function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > MAX_BODY ? undefined : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function listen(server: {
  listen(port: number, host: string, cb: () => void): unknown;
  once(event: 'error', cb: (e: Error) => void): unknown;
}) {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
}

function close(server: { close(cb: (error?: Error) => void): unknown }): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { JWK } from 'jose';

import { type Clock, systemClock } from './clock.js';
import { FaultPlan, type FaultRule } from './faults.js';
import { ALL_PERMISSIONS, createOAuthServer, type EmulatedClient } from './oauth-server.js';
import { RateLimiter } from './rate-limiter.js';
import { parseSeed, type Seed } from './seed.js';
import { createTokenApi, type RecordedRequest } from './token-api.js';
import { TokenStore } from './token-store.js';

export interface EmulatorOptions {
  host?: string;
  /** 0 or absent: a free port chosen by the OS. */
  port?: number;
  /** Checked here; a seed file's problems come back as an EmulatorUsageError. */
  seed?: Seed | Record<string, unknown>;
  clock?: Clock;
  latencyMs?: number;
  rateLimitPerMinute?: number;
  nullExpiry?: 'never' | 'inherit';
  accessTokenTtlSeconds?: number;
}

export interface Emulator {
  /** The `ROTATOR_API_URL` to use. */
  apiUrl: string;
  /** The `ROTATOR_OAUTH_ISSUER` to use. */
  issuer: string;
  tokenEndpoint: string;
  /** The first OAuth client (generated when the seed has none). */
  client: { clientId: string; clientSecret: string | undefined };
  store: TokenStore;
  faults: FaultPlan;
  requests: RecordedRequest[];
  rateLimiter: RateLimiter;
  /** The environment a rotator needs to talk to this emulator, secrets included: write it to a 0600 file. */
  rotatorEnv(): Record<string, string>;
  close(): Promise<void>;
}

export const DEFAULT_CLIENT_ID = 'token-rotator';

/**
 * The token service double: both endpoints with the real service's semantics, behind a real OAuth
 * authorization server, on one loopback port. `/oauth` is the authorization server, `/v2` the API,
 * `/_emulator` a small control API for tests and users' CI (unauthenticated: loopback only).
 */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const host = options.host ?? '127.0.0.1';
  const clock = options.clock ?? systemClock;
  const seed = parseSeed(options.seed ?? {});
  const store = new TokenStore(clock);
  const faults = new FaultPlan();
  const requests: RecordedRequest[] = [];
  const rateLimiter = new RateLimiter(clock, options.rateLimitPerMinute ?? seed.rateLimitPerMinute ?? 600);

  for (const token of seed.tokens) {
    const expiresAt =
      token.expiresAt !== undefined
        ? token.expiresAt === null
          ? null
          : new Date(token.expiresAt)
        : token.expiresIn !== undefined
          ? new Date(clock.now().getTime() + token.expiresIn)
          : null;
    store.add({ id: token.id, name: token.name, description: token.description, expiresAt });
  }
  const clients: EmulatedClient[] = seed.clients.length
    ? seed.clients.map((c) => ({
        clientId: c.clientId,
        clientSecret: c.clientSecret ?? (c.authMethod === 'private_key_jwt' ? undefined : randomBytes(24).toString('base64url')),
        authMethod: c.authMethod,
        jwks: c.jwks as { keys: JWK[] } | undefined,
        permissions: c.permissions ?? ALL_PERMISSIONS,
      }))
    : [
        {
          clientId: DEFAULT_CLIENT_ID,
          clientSecret: randomBytes(24).toString('base64url'),
          authMethod: 'client_secret_basic',
          permissions: ALL_PERMISSIONS,
        },
      ];

  let route: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => {
    res.writeHead(503).end();
  };
  const server = createServer((req, res) => route(req, res));
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const issuer = `${origin}/oauth`;
  const apiUrl = origin;

  const oauth = await createOAuthServer({ issuer, resource: apiUrl, clients, accessTokenTtlSeconds: options.accessTokenTtlSeconds ?? 600 });
  const api = createTokenApi({
    issuer,
    resource: apiUrl,
    store,
    faults,
    rateLimiter,
    clock,
    latencyMs: options.latencyMs ?? seed.latency ?? 0,
    personalTokens: seed.personalTokens,
    nullExpiry: options.nullExpiry ?? 'never',
    requests,
  });
  const control = createControlApi({ store, faults, requests });

  route = (req, res) => {
    const path = new URL(req.url ?? '/', origin).pathname;
    const handled =
      path === '/oauth' || path.startsWith('/oauth/')
        ? Promise.resolve(oauth.handle(req, res))
        : path.startsWith('/_emulator/')
          ? control(req, res, path)
          : api(req, res, path);
    handled.catch(() => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' }).end('{"message":"emulator error"}');
    });
  };

  const first = clients[0]!;
  return {
    apiUrl,
    issuer,
    tokenEndpoint: `${issuer}/token`,
    client: { clientId: first.clientId, clientSecret: first.clientSecret },
    store,
    faults,
    requests,
    rateLimiter,
    rotatorEnv: () => ({
      ROTATOR_API_URL: apiUrl,
      ROTATOR_OAUTH_ISSUER: issuer,
      ROTATOR_OAUTH_CLIENT_ID: first.clientId,
      ...(first.clientSecret ? { ROTATOR_OAUTH_CLIENT_SECRET: first.clientSecret } : {}),
    }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function createControlApi(deps: { store: TokenStore; faults: FaultPlan; requests: RecordedRequest[] }) {
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  return async (req: IncomingMessage, res: ServerResponse, path: string): Promise<void> => {
    if (req.method === 'GET' && path === '/_emulator/tokens') {
      return json(
        res,
        200,
        deps.store.all().map((t) => ({ ...TokenStore.describe(t), alive: deps.store.isAlive(t), replacedBy: t.replacedBy ?? null })),
      );
    }
    if (req.method === 'GET' && path === '/_emulator/requests') return json(res, 200, deps.requests);
    if (req.method === 'DELETE' && path === '/_emulator/faults') {
      deps.faults.clear();
      return json(res, 200, {});
    }
    if (req.method === 'POST' && path === '/_emulator/faults') {
      let rule: FaultRule;
      try {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        rule = JSON.parse(Buffer.concat(chunks).toString('utf8')) as FaultRule;
      } catch {
        return json(res, 400, { message: 'body must be a JSON fault rule' });
      }
      deps.faults.add(rule);
      return json(res, 201, {});
    }
    // The probe knob: tokens of these names answer 401 at GET /v2/user, so a `verify` probe fails.
    if (req.method === 'PUT' && path === '/_emulator/probe-failures') {
      let names: unknown;
      try {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        names = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { names?: unknown }).names;
      } catch {
        names = undefined;
      }
      if (!Array.isArray(names) || !names.every((n) => typeof n === 'string')) {
        return json(res, 400, { message: 'body must be {"names": ["token name", ...]}' });
      }
      deps.store.probeFailures.clear();
      for (const name of names as string[]) deps.store.probeFailures.add(name);
      return json(res, 200, { names });
    }
    // Which token does a secret belong to, and does it still work? For checking what sinks hold.
    if (req.method === 'GET' && path === '/_emulator/whoami') {
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const token = bearer ? deps.store.bySecret(bearer) : undefined;
      if (!token || !deps.store.isAlive(token)) return json(res, 401, { message: 'not a working API token' });
      return json(res, 200, TokenStore.describe(token));
    }
    return json(res, 404, { message: 'not found' });
  };
}

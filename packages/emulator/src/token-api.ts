import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { createGzip } from 'node:zlib';

import { createRemoteJWKSet, jwtVerify } from 'jose';

import type { Clock } from './clock.js';
import type { FaultAction, FaultPlan } from './faults.js';
import { ALL_PERMISSIONS, PERMISSIONS_CLAIM } from './oauth-server.js';
import type { RateLimiter } from './rate-limiter.js';
import { type EmulatedToken, TokenStore } from './token-store.js';

/** One API request as the emulator saw it: what tests assert on. Never a secret. */
export interface RecordedRequest {
  at: string;
  op: 'retrieve' | 'regenerate';
  id: string;
  status: number | 'dropped';
  body?: { existingTokenExpiresAt?: unknown; newTokenExpiresAt?: unknown };
  /** True when the service changed state (a regenerate took place), whatever was answered. */
  committed: boolean;
}

export interface TokenApiOptions {
  issuer: string;
  resource: string;
  store: TokenStore;
  faults: FaultPlan;
  rateLimiter: RateLimiter;
  clock: Clock;
  latencyMs: number;
  /** Static bearers the service also accepts, with the org id they must come with. */
  personalTokens: Array<{ token: string; orgId: string }>;
  /** How the service treats a regenerate without `newTokenExpiresAt` (the real answer is unconfirmed). */
  nullExpiry: 'never' | 'inherit';
  requests: RecordedRequest[];
}

/** Go's time.Parse error, as the real service words an unparseable time. */
function goParseError(value: unknown): string {
  return `parsing time ${JSON.stringify(String(value))} as "2006-01-02T15:04:05Z07:00": cannot parse ${JSON.stringify(String(value))} as "2006"`;
}

function parseTime(value: unknown): Date | undefined {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value)) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

async function readBody(req: IncomingMessage, limit = 64 * 1024): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new Error('body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function createTokenApi(options: TokenApiOptions) {
  const { store, faults, clock } = options;
  const jwks = createRemoteJWKSet(new URL(`${options.issuer}/jwks`));

  function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      ...serviceHeaders(),
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      ...headers,
    });
    res.end(text);
  }

  /** What every answer carries: a trace id, and the service's own clock, which may not be ours. */
  function serviceHeaders(): Record<string, string> {
    return { date: clock.now().toUTCString(), 'x-axiom-trace-id': randomBytes(16).toString('hex') };
  }

  /** Who is calling, and with which permissions; undefined after answering 401/403 itself. */
  async function authenticate(req: IncomingMessage, res: ServerResponse): Promise<{ caller: string; permissions: string[] } | undefined> {
    const header = req.headers.authorization ?? '';
    const match = /^Bearer (.+)$/.exec(header);
    if (!match) {
      send(res, 401, { message: 'missing or malformed authorization header' });
      return undefined;
    }
    const bearer = match[1]!;
    const personal = options.personalTokens.find((p) => p.token === bearer);
    if (personal) {
      if (req.headers['x-axiom-org-id'] !== personal.orgId) {
        send(res, 403, { message: 'personal access tokens need the x-axiom-org-id header of their organisation' });
        return undefined;
      }
      return { caller: `pat:${personal.orgId}`, permissions: ALL_PERMISSIONS };
    }
    try {
      const { payload } = await jwtVerify(bearer, jwks, {
        issuer: options.issuer,
        audience: options.resource,
        typ: 'at+jwt',
        // The authorization server signs on the real clock; the service's clock may be skewed on purpose.
      });
      const permissions = (payload[PERMISSIONS_CLAIM] as string[] | undefined) ?? [];
      return { caller: `client:${String(payload.client_id ?? payload.sub)}`, permissions };
    } catch {
      send(res, 401, { message: 'invalid access token' });
      return undefined;
    }
  }

  /** Applies a fault; answers whether the request was fully handled by it. */
  async function applyFault(
    fault: FaultAction,
    res: ServerResponse,
    request: { op: 'retrieve' | 'regenerate'; id: string },
    commit: () => EmulatedToken | undefined,
    record: (status: number | 'dropped', committed: boolean) => void,
  ): Promise<boolean> {
    switch (fault.kind) {
      case 'status': {
        const fresh = fault.commit ? commit() : undefined;
        record(fault.status, fresh !== undefined);
        const message = (fault.message ?? `injected fault ${fault.status}`).replaceAll('{{secret}}', fresh?.secret ?? '');
        send(res, fault.status, { message }, fault.headers);
        return true;
      }
      case 'answer': {
        const fresh = request.op === 'regenerate' ? commit() : undefined;
        const subject = store.get(fault.as ?? fresh?.id ?? request.id);
        record(200, fresh !== undefined);
        const body: Record<string, unknown> = {
          ...(subject ? TokenStore.describe(subject) : {}),
          ...(fresh ? { token: fresh.secret } : {}),
        };
        for (const [key, value] of Object.entries(fault.patch ?? {})) {
          if (value === null) delete body[key];
          else body[key] = value;
        }
        send(res, 200, body);
        return true;
      }
      case 'redirect': {
        const status = fault.status ?? 302;
        record(status, false);
        res.writeHead(status, { ...serviceHeaders(), location: fault.location, 'content-length': 0 }).end();
        return true;
      }
      case 'gzip-bomb': {
        const fresh = fault.commit ? commit() : undefined;
        record(200, fresh !== undefined);
        res.writeHead(200, { ...serviceHeaders(), 'content-type': 'application/json', 'content-encoding': 'gzip' });
        const gzip = createGzip({ level: 9 });
        gzip.pipe(res);
        const chunk = Buffer.alloc(1 << 20);
        // Written as the client reads: the emulator itself never holds more than a chunk.
        for (let left = fault.bytes; left > 0 && !res.destroyed; left -= chunk.length) {
          if (!gzip.write(left >= chunk.length ? chunk : chunk.subarray(0, left))) {
            await new Promise<void>((resolve) => {
              gzip.once('drain', resolve);
              res.once('close', resolve);
            });
          }
        }
        gzip.end();
        return true;
      }
      case 'drop': {
        const committed = fault.commit ? commit() !== undefined : false;
        record('dropped', committed);
        res.socket?.destroy();
        return true;
      }
      case 'hang': {
        if (!fault.commit) {
          await sleep(fault.ms);
          return false;
        }
        const fresh = commit();
        record(200, fresh !== undefined);
        await sleep(fault.ms);
        if (fresh) send(res, 200, { ...TokenStore.describe(fresh), token: fresh.secret });
        return true;
      }
      case 'omit-token': {
        const fresh = commit();
        record(200, fresh !== undefined);
        if (fresh) send(res, 200, TokenStore.describe(fresh));
        return true;
      }
      case 'unusable-token': {
        if (request.op !== 'regenerate') return false;
        const fresh = commit()!;
        record(200, true);
        send(res, 200, { ...TokenStore.describe(fresh), token: 'token' in fault ? fault.token : '' });
        return true;
      }
    }
  }

  return async function handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    // What a token's own holder may ask (Axiom's GET /v2/user): the endpoint a `verify` probe uses.
    if (path === '/v2/user' && req.method === 'GET') {
      if (options.latencyMs > 0) await sleep(options.latencyMs);
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const token = bearer ? options.store.bySecret(bearer) : undefined;
      if (!token || !options.store.isAlive(token) || options.store.probeFailures.has(token.name)) {
        send(res, 401, { code: 401, message: 'invalid token' });
        return;
      }
      send(res, 200, { id: token.id, name: token.name });
      return;
    }
    const retrieve = /^\/v2\/tokens\/([^/]+)$/.exec(path);
    const regenerate = /^\/v2\/tokens\/([^/]+)\/regenerate$/.exec(path);
    const op = retrieve && req.method === 'GET' ? 'retrieve' : regenerate && req.method === 'POST' ? 'regenerate' : undefined;
    if (!op) {
      send(res, 404, { message: 'not found' });
      return;
    }
    const id = decodeURIComponent((retrieve ?? regenerate)![1]!);
    if (options.latencyMs > 0) await sleep(options.latencyMs);

    const who = await authenticate(req, res);
    if (!who) return;
    const limit = options.rateLimiter.hit(who.caller, who.caller.startsWith('pat:') ? 'user' : 'organization');
    const entry: RecordedRequest = { at: clock.now().toISOString(), op, id, status: 0, committed: false };
    options.requests.push(entry);
    const record = (status: number | 'dropped', committed: boolean) => {
      entry.status = status;
      entry.committed = committed;
    };
    if (limit.limited) {
      record(429, false);
      send(res, 429, { message: 'API rate limit exceeded' }, limit.headers);
      return;
    }
    const needed = op === 'retrieve' ? 'apiTokens|read' : 'apiTokens|update';
    if (!who.permissions.includes(needed)) {
      record(403, false);
      send(res, 403, { message: `forbidden: missing ${needed}` }, limit.headers);
      return;
    }

    if (op === 'retrieve') {
      const fault = faults.take('retrieve', id);
      if (fault && (await applyFault(fault, res, { op, id }, () => undefined, record))) return;
      const token = store.get(id);
      record(token ? 200 : 404, false);
      if (!token) send(res, 404, { message: 'token not found' }, limit.headers);
      else send(res, 200, TokenStore.describe(token), limit.headers);
      return;
    }

    let body: Record<string, unknown>;
    try {
      body = JSON.parse(await readBody(req)) as Record<string, unknown>;
    } catch {
      record(400, false);
      send(res, 400, { message: 'invalid request body' }, limit.headers);
      return;
    }
    entry.body = { existingTokenExpiresAt: body.existingTokenExpiresAt, newTokenExpiresAt: body.newTokenExpiresAt };
    const token = store.get(id);
    if (!token) {
      record(404, false);
      send(res, 404, { message: 'token not found' }, limit.headers);
      return;
    }
    const existingTokenExpiresAt = parseTime(body.existingTokenExpiresAt);
    if (!existingTokenExpiresAt) {
      record(400, false);
      send(res, 400, { message: goParseError(body.existingTokenExpiresAt) }, limit.headers);
      return;
    }
    let newTokenExpiresAt: Date | null = null;
    if (body.newTokenExpiresAt === null || body.newTokenExpiresAt === undefined) {
      newTokenExpiresAt = options.nullExpiry === 'inherit' ? token.expiresAt : null;
    } else {
      const parsed = parseTime(body.newTokenExpiresAt);
      if (!parsed) {
        record(400, false);
        send(res, 400, { message: goParseError(body.newTokenExpiresAt) }, limit.headers);
        return;
      }
      newTokenExpiresAt = parsed;
    }
    // A replaced token that still works can be regenerated again: each time mints another token.
    const commit = () => store.regenerate(id, existingTokenExpiresAt, newTokenExpiresAt);
    const fault = faults.take('regenerate', id);
    if (fault && (await applyFault(fault, res, { op, id }, commit, record))) return;
    const fresh = commit();
    record(200, true);
    send(res, 200, { ...TokenStore.describe(fresh), token: fresh.secret }, limit.headers);
  };
}

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { Secret } from '../../src/secret.js';
import { probeNewToken } from '../../src/verify/probe.js';
import { verifyProbeSchema } from '../../src/verify/verify-config.js';

/*
 * The probe against a real local server: what it sends, what it accepts, what it says, and what it
 * never repeats (the body, the token).
 */

const CANARY = 'xaat-probe-canary-7f3a';
let server: Server;
let base: string;
let answers: Array<{ status: number; body?: string; location?: string }> = [];
const seen: Array<{ authorization?: string; path?: string }> = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    seen.push({ authorization: request.headers.authorization, path: request.url });
    const next = answers.shift() ?? { status: 200 };
    response.writeHead(next.status, next.location ? { location: next.location } : {});
    response.end(next.body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const noWait = () => Promise.resolve();
function probe(raw: Record<string, unknown> = {}) {
  return verifyProbeSchema.parse({ url: `${base}/v2/user`, ...raw });
}

describe('the probe with the new token', () => {
  it('sends the new token as a bearer and passes on an expected status', async () => {
    answers = [{ status: 200, body: `{"echo":"${CANARY}"}` }];
    seen.length = 0;
    expect(await probeNewToken(probe(), new Secret(CANARY), { sleep: noWait })).toEqual({ ok: true, status: 200 });
    expect(seen).toEqual([{ authorization: `Bearer ${CANARY}`, path: '/v2/user' }]);
  });

  it('tries again, spaced, and fails naming the status, never the body or the token', async () => {
    answers = [{ status: 401, body: CANARY }, { status: 401, body: CANARY }, { status: 503 }];
    seen.length = 0;
    const waits: number[] = [];
    const result = await probeNewToken(probe({ retries: 2 }), new Secret(CANARY), {
      sleep: (ms) => {
        waits.push(ms);
        return Promise.resolve();
      },
    });
    expect(result).toEqual({
      ok: false,
      message: `the probe with the new token failed after 3 tries: ${base}/v2/user answered 503, expected 200`,
    });
    expect(seen).toHaveLength(3);
    expect(waits).toEqual([1000, 2000]);
    expect(JSON.stringify(result)).not.toContain(CANARY);
  });

  it('does not follow a redirect to another origin: the token would go with it', async () => {
    answers = [{ status: 302, location: 'http://localhost:1/steal' }];
    seen.length = 0;
    const result = await probeNewToken(probe({ retries: 0 }), new Secret(CANARY), { sleep: noWait });
    expect(result.ok).toBe(false);
    expect(seen).toHaveLength(1);
    expect(JSON.stringify(result)).toContain('redirect to another origin');
  });

  it('refuses plain http off loopback and a URL with credentials, in the policy', () => {
    expect(verifyProbeSchema.safeParse({ url: 'http://api.example.com/v2/user' }).error?.issues[0]?.message).toMatch(/https/);
    expect(verifyProbeSchema.safeParse({ url: 'https://u:p@api.example.com/' }).error?.issues[0]?.message).toBe(
      'must not hold credentials',
    );
    expect(verifyProbeSchema.parse({ url: 'https://api.example.com/v2/user', timeout: '5s' })).toMatchObject({
      expectStatus: [200],
      timeoutMs: 5000,
      retries: 3,
    });
  });
});

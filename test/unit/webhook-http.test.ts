import type { IncomingMessage, ServerResponse } from 'node:http';

import type { Got } from 'got';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { MAX_RESPONSE_BYTES } from '../../src/http/response-size.js';
import { webhookHttp } from '../../src/http/webhook-http.js';
import { startRecorder } from '../helpers/recorder.js';

/**
 * The client of every outgoing webhook (notifications), against a real receiver on a local port.
 * Whether and how often a request is sent again is webhookHttp's decision; only got's wait before
 * each attempt (about a second, doubling) is cut to a millisecond, so the tests run in milliseconds.
 */
const servers: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function receiver(answer: (req: IncomingMessage, res: ServerResponse, attempt: number) => void) {
  let attempt = 0;
  const server = await startRecorder((req, res) => answer(req, res, ++attempt));
  servers.push(server);
  return server;
}

const answerWith = (status: number) => (_req: IncomingMessage, res: ServerResponse) => res.writeHead(status).end('{}');

/** No wait before a repeated attempt; got still decides (delay 0: not repeated) from webhookHttp's rules. */
const withoutWaiting = (http: Got) => http.extend({ retry: { calculateDelay: ({ computedValue }) => (computedValue > 0 ? 1 : 0) } });

async function refusal(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('the request did not fail');
}

describe('webhookHttp', () => {
  it('posts to the receiver as token-rotator, and gives its answer', async () => {
    const server = await receiver(answerWith(200));
    const response = await webhookHttp().post(server.url, { json: { event: 'rotated' } });
    expect(response.statusCode).toBe(200);
    expect(server.calls).toHaveLength(1);
    expect(server.calls[0]).toMatchObject({ method: 'POST', body: '{"event":"rotated"}' });
    expect(server.calls[0]!.headers['user-agent']).toBe('token-rotator');
  });

  it.each([408, 429, 500, 502, 503, 504])('sends a POST answered %i again: receivers take the same event twice', async (status) => {
    const server = await receiver((req, res, attempt) => answerWith(attempt === 1 ? status : 200)(req, res));
    const response = await withoutWaiting(webhookHttp({ retries: 1 })).post(server.url, { json: {} });
    expect(response.statusCode).toBe(200);
    expect(server.calls).toHaveLength(2);
  });

  it.each([400, 401, 404, 413, 501])('does not send again a POST answered %i: it would be refused the same way', async (status) => {
    const server = await receiver(answerWith(status));
    const error = await refusal(withoutWaiting(webhookHttp({ retries: 3 })).post(server.url, { json: {} }));
    expect(error).toMatchObject({ response: { statusCode: status } });
    expect(server.calls).toHaveLength(1);
  });

  it('sends a POST again after the connection was cut', async () => {
    const server = await receiver((req, res, attempt) => (attempt === 1 ? req.socket.destroy() : answerWith(200)(req, res)));
    const response = await withoutWaiting(webhookHttp({ retries: 1 })).post(server.url, { json: {} });
    expect(response.statusCode).toBe(200);
    expect(server.calls).toHaveLength(2);
  });

  it('tries three times more by default, then gives up with the last answer', async () => {
    const server = await receiver(answerWith(503));
    const error = await refusal(withoutWaiting(webhookHttp()).post(server.url, { json: {} }));
    expect(error).toMatchObject({ response: { statusCode: 503 } });
    expect(server.calls).toHaveLength(4);
  });

  it.each([0, 1, 5])('tries %i times more when told to', async (retries) => {
    const server = await receiver(answerWith(503));
    await refusal(withoutWaiting(webhookHttp({ retries })).post(server.url, { json: {} }));
    expect(server.calls).toHaveLength(retries + 1);
  });

  it('gives up on a receiver that does not answer within the timeout it was given', async () => {
    // The receiver answers after 3 s: without a timeout of 200 ms the request would succeed.
    const server = await receiver((req, res) => setTimeout(() => answerWith(200)(req, res), 3000).unref());
    const error = await refusal(webhookHttp({ timeoutMs: 200, retries: 0 }).post(server.url, { json: {} }));
    expect(error).toMatchObject({ code: 'ETIMEDOUT' });
  });

  it('gives up on a receiver that does not answer within 5 seconds by default', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let arrived!: () => void;
    const received = new Promise<void>((resolve) => (arrived = resolve));
    // It answers 5.2 s after the request came (on the test's clock): too late.
    const server = await receiver((req, res) => {
      setTimeout(() => answerWith(200)(req, res), 5200);
      arrived();
    });
    let settled: unknown = 'pending';
    const request = webhookHttp({ retries: 0 })
      .post(server.url, { json: {} })
      .then(
        () => (settled = 'answered'),
        (error: unknown) => (settled = error),
      );
    await received;
    await vi.advanceTimersByTimeAsync(4000);
    expect(settled).toBe('pending');
    await vi.advanceTimersByTimeAsync(1500);
    await request;
    expect(settled).toMatchObject({ code: 'ETIMEDOUT' });
  });

  it('refuses an answer larger than the bound instead of reading it into memory', async () => {
    const server = await receiver((_req, res) => res.writeHead(200).end(Buffer.alloc(MAX_RESPONSE_BYTES + 1, 'a')));
    const error = await refusal(webhookHttp({ retries: 0 }).post(server.url, { json: {} }));
    expect(error).toMatchObject({ code: 'ERR_RESPONSE_TOO_LARGE' });
  });
});

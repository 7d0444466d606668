import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

const TOLERANCE_SECONDS = 300;

/**
 * The check docs/reference/reload.md gives receivers, word for word but for the types (held equal
 * by test/unit/docs-snippets.test.ts): the signature over `v1:<timestamp>:<raw body>` under the
 * shared key, compared in constant time, and the timestamp within 5 minutes of the receiver's clock. Tests verify deliveries with this, not with a copy of
 * the sender's code.
 */
export function verifyTokenRotatorWebhook(
  headers: IncomingHttpHeaders,
  rawBody: Buffer,
  key: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): boolean {
  const timestamp = headers['x-token-rotator-timestamp'];
  const signature = headers['x-token-rotator-signature'];
  if (typeof timestamp !== 'string' || !/^\d+$/.test(timestamp)) return false;
  if (typeof signature !== 'string' || !signature.startsWith('v1=')) return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > TOLERANCE_SECONDS) return false;
  const expected = createHmac('sha256', key).update(`v1:${timestamp}:`).update(rawBody).digest();
  const given = Buffer.from(signature.slice('v1='.length), 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export interface ReceivedCall {
  headers: IncomingHttpHeaders;
  body: Buffer;
  accepted: boolean;
}

/**
 * A loopback receiver that verifies every request as above: 401 when the check fails, else what
 * `answer` says (204 by default). `nowSeconds` is its clock, which a test may move to replay a
 * captured request later.
 */
export async function startSignedWebhookReceiver(
  key: string,
  options: { nowSeconds?: () => number; answer?: (call: ReceivedCall) => number } = {},
) {
  const calls: ReceivedCall[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const accepted = verifyTokenRotatorWebhook(req.headers, body, key, options.nowSeconds?.());
      const call = { headers: req.headers, body, accepted };
      calls.push(call);
      res.writeHead(accepted ? (options.answer?.(call) ?? 204) : 401).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    calls,
    /** Sends `call` again, with `change` applied: the way an attacker who captured it would. */
    replay: async (call: ReceivedCall, change: { body?: string; headers?: Record<string, string> } = {}) => {
      const headers = {
        'content-type': 'application/json',
        'x-token-rotator-timestamp': String(call.headers['x-token-rotator-timestamp']),
        'x-token-rotator-signature': String(call.headers['x-token-rotator-signature']),
        ...change.headers,
      };
      const response = await fetch(`${url}/reload`, { method: 'POST', headers, body: change.body ?? call.body });
      return response.status;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

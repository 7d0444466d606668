import { createHmac } from 'node:crypto';
import { Readable } from 'node:stream';

import got from 'got';
import { afterEach, describe, expect, it } from 'vitest';

import { fixedClock } from '../../src/clock.js';
import { SIGNATURE_HEADER, signatureHeaders, signedWith, TIMESTAMP_HEADER } from '../../src/http/webhook-signature.js';
import { Secret } from '../../src/secret.js';
import { startRecorder } from '../helpers/recorder.js';

/**
 * The v1 scheme a receiver checks: HMAC-SHA256 under the shared key of `v1:<unix seconds>:<body>`,
 * given as `v1=<hex>`, and the seconds in their own header. Computed here independently.
 */
const KEY = 'webhook-signing-key-canary-7f31';
const receiverComputes = (key: string, timestamp: string, body: string | Buffer) =>
  `v1=${createHmac('sha256', key)
    .update(Buffer.concat([Buffer.from(`v1:${timestamp}:`), Buffer.from(body)]))
    .digest('hex')}`;

describe('signatureHeaders', () => {
  it('gives the Unix time in whole seconds and the v1 signature of that time and the body', () => {
    const headers = signatureHeaders('{"event":"rotated"}', KEY, new Date('2026-01-01T00:00:00.999Z'));
    expect(headers).toEqual({
      [TIMESTAMP_HEADER]: '1767225600',
      [SIGNATURE_HEADER]: receiverComputes(KEY, '1767225600', '{"event":"rotated"}'),
    });
  });

  it('signs bytes as the same text', () => {
    const at = new Date('2026-01-01T00:00:00Z');
    expect(signatureHeaders(Buffer.from('{"é":1}'), KEY, at)).toEqual(signatureHeaders('{"é":1}', KEY, at));
  });

  it.each([
    ['another body', '{"event":"other"}', KEY, '2026-01-01T00:00:00Z'],
    ['another key', '{"event":"rotated"}', `${KEY}-2`, '2026-01-01T00:00:00Z'],
    ['another second', '{"event":"rotated"}', KEY, '2026-01-01T00:00:01Z'],
  ])('changes with %s', (_what, body, key, at) => {
    const base = signatureHeaders('{"event":"rotated"}', KEY, new Date('2026-01-01T00:00:00Z'))[SIGNATURE_HEADER];
    expect(signatureHeaders(body, key, new Date(at))[SIGNATURE_HEADER]).not.toBe(base);
  });

  it('uses header names a receiver can look up', () => {
    expect([TIMESTAMP_HEADER, SIGNATURE_HEADER]).toEqual(['x-token-rotator-timestamp', 'x-token-rotator-signature']);
  });
});

describe('signedWith', () => {
  const clock = fixedClock('2026-03-04T05:06:07.500Z');
  const hook = signedWith(new Secret(KEY), clock).hooks.beforeRequest[0]!;
  const sign = (body: unknown) => {
    const options = { body, headers: {} } as unknown as Parameters<typeof hook>[0];
    void hook(options, { retryCount: 0 });
    return options.headers;
  };

  it.each([
    ['text', '{"a":1}'],
    ['bytes', Buffer.from('{"a":1}')],
    ['a Uint8Array', new TextEncoder().encode('{"a":1}')],
  ])('signs a body of %s with the time of the attempt', (_what, body) => {
    expect(sign(body)).toEqual({
      [TIMESTAMP_HEADER]: '1772600767',
      [SIGNATURE_HEADER]: receiverComputes(KEY, '1772600767', '{"a":1}'),
    });
  });

  it.each([
    ['no body', undefined],
    ['a stream', Readable.from(['{"a":1}'])],
    ['a form', new URLSearchParams({ a: '1' })],
  ])('refuses to send %s, which it cannot sign', (_what, body) => {
    // Its own refusal, which says why, not whatever the HMAC would throw on such a body.
    expect(() => sign(body)).toThrow(expect.objectContaining({ name: 'TypeError', message: expect.stringMatching(/text body/) }));
  });

  describe('on a real request', () => {
    const servers: Array<{ close(): Promise<void> }> = [];
    afterEach(async () => {
      await Promise.all(servers.splice(0).map((s) => s.close()));
    });

    it('sends headers that verify against the body the receiver got', async () => {
      const server = await startRecorder();
      servers.push(server);
      await got.post(server.url, { json: { event: 'rotated', token: 'ingest' }, ...signedWith(new Secret(KEY), clock) });
      const [call] = server.calls;
      const timestamp = String(call!.headers[TIMESTAMP_HEADER]);
      expect(timestamp).toBe('1772600767');
      expect(call!.headers[SIGNATURE_HEADER]).toBe(receiverComputes(KEY, timestamp, call!.body));
    });
  });
});

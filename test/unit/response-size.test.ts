import { gzipSync } from 'node:zlib';

import got from 'got';
import { afterEach, describe, expect, it } from 'vitest';

import { limitResponseSize, MAX_RESPONSE_BYTES, ResponseTooLargeError } from '../../src/http/response-size.js';
import { startRecorder } from '../helpers/recorder.js';

/**
 * A peer (the token service, Vault, a webhook receiver) may answer with far more than any
 * legitimate answer, or with a small gzip body that inflates to gigabytes: the answer is refused at
 * the bound, counted after decompression, never read whole into memory.
 */
const servers: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A local server that answers every request with `body` (gzipped on the wire when asked). */
async function answering(body: Buffer, options: { status?: number; gzip?: boolean } = {}) {
  const server = await startRecorder((_req, res) => {
    const wire = options.gzip ? gzipSync(body) : body;
    res.writeHead(options.status ?? 200, {
      'content-type': 'application/octet-stream',
      'content-length': String(wire.length),
      ...(options.gzip ? { 'content-encoding': 'gzip' } : {}),
    });
    res.end(wire);
  });
  servers.push(server);
  return server;
}

const client = (limit?: number) =>
  got.extend({
    handlers: [limit === undefined ? limitResponseSize() : limitResponseSize(limit)],
    retry: { limit: 0 },
    responseType: 'buffer',
  });

async function refusal(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('the request was not refused');
}

describe('limitResponseSize', () => {
  it('refuses an answer one byte over the limit with ERR_RESPONSE_TOO_LARGE', async () => {
    const server = await answering(Buffer.alloc(4097, 'a'));
    const error = await refusal(client(4096).get(server.url));
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect(error).toMatchObject({ code: 'ERR_RESPONSE_TOO_LARGE', limit: 4096, name: 'ResponseTooLargeError' });
  });

  it('accepts an answer of exactly the limit, whole', async () => {
    const server = await answering(Buffer.alloc(4096, 'a'));
    const response = await client(4096).get(server.url);
    expect(response.body).toHaveLength(4096);
  });

  it('counts the answer after decompression: a small gzip body that inflates past the limit is refused', async () => {
    const inflated = Buffer.alloc(256 * 1024);
    const server = await answering(inflated, { gzip: true });
    expect(gzipSync(inflated).length).toBeLessThan(4096);
    const error = await refusal(client(64 * 1024).get(server.url));
    expect(error).toMatchObject({ code: 'ERR_RESPONSE_TOO_LARGE' });
  });

  it('leaves any other failure as it was: an error status stays an HTTP error', async () => {
    const server = await answering(Buffer.from('{"message":"down"}'), { status: 500 });
    const error = await refusal(client(4096).get(server.url));
    expect(error).not.toBeInstanceOf(ResponseTooLargeError);
    expect(error).toMatchObject({ code: 'ERR_NON_2XX_3XX_RESPONSE', response: { statusCode: 500 } });
  });

  it(`bounds an answer at ${MAX_RESPONSE_BYTES} bytes by default, and says so in KiB`, async () => {
    const atLimit = await answering(Buffer.alloc(MAX_RESPONSE_BYTES, 'a'));
    expect((await client().get(atLimit.url)).body).toHaveLength(MAX_RESPONSE_BYTES);
    const over = await answering(Buffer.alloc(MAX_RESPONSE_BYTES + 1, 'a'));
    const error = await refusal(client().get(over.url));
    expect(error).toMatchObject({ code: 'ERR_RESPONSE_TOO_LARGE', limit: MAX_RESPONSE_BYTES });
    expect((error as Error).message).toContain(`${MAX_RESPONSE_BYTES / 1024} KiB`);
  });

  it('lets a streamed request through untouched: a stream is read by its caller', async () => {
    const server = await answering(Buffer.alloc(8192, 'a'));
    let received = 0;
    for await (const chunk of client(4096).stream(server.url)) received += (chunk as Buffer).length;
    expect(received).toBe(8192);
  });
});

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';

import { afterEach, describe, expect, it } from 'vitest';

import { gotFetch } from '../../src/http/got-fetch.js';
import { createHttpStack } from '../../src/http/http-stack.js';
import { MAX_RESPONSE_BYTES, ResponseTooLargeError } from '../../src/http/response-size.js';
import { freePort } from '../helpers/free-port.js';

/** What the server saw of each request. */
interface Seen {
  method: string;
  body: string;
  contentType: string | undefined;
  custom: string | undefined;
}

async function closeServer(server: Server | undefined): Promise<void> {
  if (!server) return;
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

describe('gotFetch: openid-client`s fetch made of the run`s got stack', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await closeServer(server);
    server = undefined;
  });

  async function serve(answer: (req: IncomingMessage, res: ServerResponse) => void) {
    const seen: Seen[] = [];
    const connections = { count: 0 };
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        seen.push({
          method: req.method!,
          body: Buffer.concat(chunks).toString(),
          contentType: req.headers['content-type'],
          custom: req.headers['x-custom'] as string | undefined,
        });
        answer(req, res);
      });
    });
    server.on('connection', () => (connections.count += 1));
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    return { url: `http://127.0.0.1:${port}/token`, seen, connections };
  }

  const fetch = () => gotFetch(createHttpStack({ timeoutMs: 20_000 }));

  it('sends the method, headers and a form body, and answers with status, text, headers and the url asked', async () => {
    const { url, seen } = await serve((_req, res) => {
      res.writeHead(418, 'Short And Stout', { 'content-type': 'application/json', 'x-answer': 'yes' });
      res.end('{"ok":true}');
    });
    const answer = await fetch()(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-custom': 'kept' },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'a b' }),
    });
    expect(seen).toEqual([
      { method: 'POST', body: 'grant_type=client_credentials&scope=a+b', contentType: 'application/x-www-form-urlencoded', custom: 'kept' },
    ]);
    expect(answer).toBeInstanceOf(Response);
    expect(answer.status).toBe(418);
    expect(answer.statusText).toBe('Short And Stout');
    expect(answer.headers.get('x-answer')).toBe('yes');
    expect(answer.url).toBe(url);
    expect(await answer.json()).toEqual({ ok: true });
  });

  it('sends GET with no body when no method is given, and takes a null body as none', async () => {
    const { url, seen } = await serve((_req, res) => res.end('plain'));
    await fetch()(url, {});
    await fetch()(url, { body: null });
    expect(seen.map(({ method, body }) => [method, body])).toEqual([
      ['GET', ''],
      ['GET', ''],
    ]);
  });

  it('sends a string, a view into a larger buffer and an ArrayBuffer as they are', async () => {
    const { url, seen } = await serve((_req, res) => res.end());
    const whole = new TextEncoder().encode('xxhello-viewyy');
    await fetch()(url, { method: 'POST', body: 'as-a-string' });
    await fetch()(url, { method: 'POST', body: whole.subarray(2, 12) });
    await fetch()(url, { method: 'POST', body: new TextEncoder().encode('array-buffer').buffer });
    expect(seen.map(({ body }) => body)).toEqual(['as-a-string', 'hello-view', 'array-buffer']);
  });

  it('refuses a streamed body before sending anything', async () => {
    const { url, seen } = await serve((_req, res) => res.end());
    await expect(fetch()(url, { method: 'POST', body: Readable.from(['a']) })).rejects.toThrow(
      new TypeError('a streamed request body is not supported'),
    );
    expect(seen).toEqual([]);
  });

  it('answers a 204 with no body (a Response refuses one there)', async () => {
    const { url } = await serve((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    const answer = await fetch()(url, {});
    expect(answer.status).toBe(204);
    expect(answer.body).toBeNull();
  });

  it('hands back a redirect and an error status as answers, sent once, never followed or retried', async () => {
    let calls = 0;
    const { url, seen } = await serve((_req, res) => {
      calls += 1;
      if (calls === 1) res.writeHead(302, { location: '/elsewhere' }).end();
      else res.writeHead(503, { 'retry-after': '0' }).end('busy');
    });
    const redirect = await fetch()(url, { redirect: 'manual' });
    expect([redirect.status, redirect.headers.get('location')]).toEqual([302, '/elsewhere']);
    const failed = await fetch()(url, { method: 'POST', body: 'x' });
    expect([failed.status, await failed.text()]).toEqual([503, 'busy']);
    expect(seen).toHaveLength(2);
  });

  it('gives the decoded body without the headers that described the encoded one, and every value of a repeated header', async () => {
    const { gzipSync } = await import('node:zlib');
    const encoded = gzipSync('{"decoded":true}');
    const { url } = await serve((_req, res) => {
      res.writeHead(200, {
        'content-encoding': 'gzip',
        'content-length': String(encoded.length),
        'content-type': 'application/json',
        'set-cookie': ['a=1', 'b=2'],
      });
      res.end(encoded);
    });
    const answer = await fetch()(url, {});
    expect(answer.headers.get('content-encoding')).toBeNull();
    expect(answer.headers.get('content-length')).toBeNull();
    expect(answer.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await answer.json()).toEqual({ decoded: true });
  });

  it('rejects an aborted request with the signal`s reason, as fetch does', async () => {
    const { url } = await serve(() => undefined); // never answers
    const controller = new AbortController();
    const reason = new Error('openid-client gave up waiting');
    // A stack timeout far past the test's: only the signal can end this request.
    const pending = gotFetch(createHttpStack({ timeoutMs: 600_000 }))(url, { signal: controller.signal });
    setTimeout(() => controller.abort(reason), 50);
    await expect(pending).rejects.toBe(reason);
  });

  it('rejects a failure that is not an abort with got`s own error, its code kept', async () => {
    const port = await freePort();
    await expect(fetch()(`http://127.0.0.1:${port}/token`, { signal: new AbortController().signal })).rejects.toMatchObject({
      code: 'ECONNREFUSED',
      message: expect.stringContaining(String(port)),
    });
  });
});

describe('createHttpStack: the one got instance of a run', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await closeServer(server);
    server = undefined;
  });

  async function serve(body: Buffer | string) {
    const connections = { count: 0 };
    server = createServer((_req, res) => res.end(body));
    server.keepAliveTimeout = 1000; // as the emulator: Node's own agent would never reuse such a connection
    server.on('connection', () => (connections.count += 1));
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    return { url: `http://127.0.0.1:${port}/`, connections };
  }

  it('keeps its connection between requests', async () => {
    const { url, connections } = await serve('ok');
    const http = createHttpStack({ timeoutMs: 20_000 });
    for (let i = 0; i < 3; i++) await http(url);
    expect(connections.count).toBe(1);
  });

  it('gives up on a server that does not answer within its timeout', async () => {
    server = createServer(() => undefined); // never answers
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await expect(createHttpStack({ timeoutMs: 200 })(`http://127.0.0.1:${port}/`)).rejects.toMatchObject({ code: 'ETIMEDOUT' });
  });

  it('refuses an answer past the size bound', async () => {
    const { url } = await serve(Buffer.alloc(MAX_RESPONSE_BYTES + 4096, 'a'));
    await expect(createHttpStack({ timeoutMs: 20_000 })(url)).rejects.toBeInstanceOf(ResponseTooLargeError);
  });
});

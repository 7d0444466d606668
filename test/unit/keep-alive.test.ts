import { createServer, type Server } from 'node:http';

import { afterEach, describe, expect, it } from 'vitest';

import { localServerClient } from '../helpers/rotator-client.js';

describe('the token service client keeps its connections', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  /** A server that keeps idle connections 1 s (`Keep-Alive: timeout=1`), as the emulator does. */
  async function serve() {
    const connections = { count: 0 };
    server = createServer((req, res) => {
      const id = decodeURIComponent(req.url!.split('/').pop()!);
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.method === 'POST')
        res.end(JSON.stringify({ id: `${id}-next`, name: id, token: 'xaat-new-secret-0123456789', expiresAt: null }));
      else res.end(JSON.stringify({ id, name: id, expiresAt: null }));
    });
    server.keepAliveTimeout = 1000;
    server.on('connection', () => (connections.count += 1));
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const api = localServerClient(server);
    return { api, connections };
  }

  it('sends requests one after the other over one connection, even to a server that keeps it only a second', async () => {
    const { api, connections } = await serve();
    for (let i = 0; i < 5; i++) await api.retrieve(`t${i}`);
    await api.regenerate('t0', { existingTokenExpiresAt: new Date(Date.now() + 3600_000), newTokenExpiresAt: null });
    expect(connections.count).toBe(1);
  });

  it('opens no more connections than requests at once', async () => {
    const { api, connections } = await serve();
    await Promise.all(Array.from({ length: 4 }, (_, i) => api.retrieve(`a${i}`)));
    await Promise.all(Array.from({ length: 4 }, (_, i) => api.retrieve(`b${i}`)));
    expect(connections.count).toBe(4);
  });
});

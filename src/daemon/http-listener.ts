import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { Registry } from 'prom-client';

export interface ListenerState {
  /** Policy loaded and the last check reached the service. */
  ready(): { ready: boolean; reason: string };
  /** Every token's sinks were delivered (or found holding the current secret) since this process started. */
  started(): { ready: boolean; reason: string };
}

/**
 * `/healthz` (alive), `/readyz` (ready to do its job), `/startupz` (every token's sinks hold its
 * current secret since start: an app beside it may start), `/metrics` (Prometheus). Nothing else.
 */
export async function startListener(options: {
  host: string;
  port: number;
  registry: Registry;
  state: ListenerState;
}): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') {
      res.writeHead(405, { allow: 'GET' }).end();
      return;
    }
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else if (path === '/readyz' || path === '/startupz') {
      const { ready, reason } = path === '/readyz' ? options.state.ready() : options.state.started();
      res.writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' }).end(`${reason}\n`);
    } else if (path === '/metrics') {
      options.registry
        .metrics()
        .then((text) => res.writeHead(200, { 'content-type': options.registry.contentType }).end(text))
        .catch(() => res.writeHead(500).end());
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}` };
}

import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';

import got, { type Got } from 'got';

import { limitResponseSize } from './response-size.js';

/**
 * Connections are kept open between requests: a new TCP (and TLS) connection per request cost a
 * round trip or three each. An idle one is closed after a few seconds, and a little before the
 * time the server says it keeps it (`Keep-Alive: timeout=N`), so that a request is not sent on a
 * connection the server is closing: Node's own margin (1 s) would make a server that keeps
 * connections 1 s never reuse one. Free sockets do not keep the process alive.
 */
const KEEP_ALIVE = { keepAlive: true, timeout: 4000, agentKeepAliveTimeoutBuffer: 250, scheduling: 'lifo' } as const;

/**
 * The one HTTP client a run talks to the token service and its authorization server with: one pair
 * of keep-alive agents (the emulator, and many deployments, serve both on one origin, so the token
 * request and the API share connections), one timeout, and every answer's size bounded after
 * decompression. Node's global `fetch` (undici, whose HTTP parser is WebAssembly compiled on the
 * first connection, some megabytes resident) is not used: OAuth goes through `gotFetch` on this.
 */
export function createHttpStack(options: { timeoutMs: number }): Got {
  return got.extend({
    agent: { http: new HttpAgent(KEEP_ALIVE), https: new HttpsAgent(KEEP_ALIVE) },
    timeout: { request: options.timeoutMs },
    handlers: [limitResponseSize()],
  });
}

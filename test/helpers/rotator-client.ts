import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';

import type { Emulator } from 'token-rotator-emulator';

import type { RateLimitPacer } from '../../src/api/rate-limit-pacer.js';
import { createTokenServiceClient } from '../../src/api/token-service-client.js';
import type { AccessTokenSource } from '../../src/auth/access-token-source.js';
import { oauthClientCredentials } from '../../src/auth/oauth-client-credentials.js';
import { type Clock, systemClock } from '../../src/clock.js';
import { createLogger } from '../../src/log/logger.js';
import { Secret } from '../../src/secret.js';

/** A log destination that keeps every line, for leak checks. */
export function captureLog() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, logger: createLogger({ level: 'trace', destination }) };
}

export function emulatorAuth(emulator: Emulator, timeoutMs = 5000): AccessTokenSource {
  return oauthClientCredentials(
    {
      kind: 'oauth',
      issuer: new URL(emulator.issuer),
      tokenUrl: undefined,
      clientId: emulator.client.clientId,
      method: 'client_secret_basic',
      clientSecret: new Secret(emulator.client.clientSecret!),
      privateKey: undefined,
      scope: undefined,
      resource: undefined,
    },
    { clock: systemClock, timeoutMs },
  );
}

export function emulatorClient(emulator: Emulator, options: { timeoutMs?: number } = {}) {
  const log = captureLog();
  const api = createTokenServiceClient({
    apiUrl: new URL(emulator.apiUrl),
    auth: emulatorAuth(emulator),
    timeoutMs: options.timeoutMs ?? 5000,
    clock: systemClock,
    logger: log.logger,
    random: () => 0,
  });
  return { api, log };
}

/**
 * A token service client for a plain local server (listening already) that takes any bearer: for
 * tests that shape the service's answers themselves (keep-alive, rate limit headers).
 */
export function localServerClient(server: Server, options: { clock?: Clock; pacer?: RateLimitPacer } = {}) {
  const auth: AccessTokenSource = { getAccessToken: async () => new Secret('access-token-0123456789'), invalidate: () => false };
  return createTokenServiceClient({
    apiUrl: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    auth,
    timeoutMs: 5000,
    clock: options.clock ?? systemClock,
    logger: captureLog().logger,
    ...(options.pacer ? { pacer: options.pacer } : {}),
  });
}

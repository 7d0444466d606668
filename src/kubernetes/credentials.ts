import { readFile } from 'node:fs/promises';

import type { Clock } from '../clock.js';
import { KubernetesError } from '../errors.js';
import { Secret } from '../secret.js';
import type { Connection } from './connection.js';
import { type ExecCredential, runExecPlugin } from './exec-credential.js';

/** What one request presents: a bearer, or a client certificate (TLS), or nothing. */
export interface RequestCredential {
  bearer?: Secret;
  certificate?: string;
  key?: Secret;
}

export interface Credentials {
  current(): Promise<RequestCredential>;
  /** The API server refused the last one (401): read or fetch a fresh one next time. */
  invalidate(): void;
}

/** A token file is read again at least this often: the kubelet rotates projected tokens well before they expire. */
const TOKEN_FILE_MAX_AGE_MS = 60_000;
/** An exec credential is renewed this long before its expiry. */
const EXEC_RENEW_MARGIN_MS = 30_000;

export function connectionCredentials(connection: Connection, clock: Clock): Credentials {
  const { auth } = connection;
  switch (auth.kind) {
    case 'none':
      return { current: async () => ({}), invalidate: () => undefined };
    case 'token': {
      const bearer = new Secret(auth.token);
      return { current: async () => ({ bearer }), invalidate: () => undefined };
    }
    case 'client-certificate': {
      const key = new Secret(auth.key);
      return { current: async () => ({ certificate: auth.certificate, key }), invalidate: () => undefined };
    }
    case 'token-file': {
      let cached: { bearer: Secret; readAt: number } | undefined;
      return {
        async current() {
          const now = clock.now().getTime();
          if (!cached || now - cached.readAt > TOKEN_FILE_MAX_AGE_MS) {
            let text: string;
            try {
              text = (await readFile(auth.path, 'utf8')).trim();
            } catch (error) {
              throw new KubernetesError(`cannot read the service account token ${auth.path}: ${(error as NodeJS.ErrnoException).code}`);
            }
            cached = { bearer: new Secret(text), readAt: now };
          }
          return { bearer: cached.bearer };
        },
        invalidate: () => {
          cached = undefined;
        },
      };
    }
    case 'exec': {
      let cached: ExecCredential | undefined;
      let running: Promise<ExecCredential> | undefined;
      const fresh = (credential: ExecCredential) =>
        !credential.expiresAt || credential.expiresAt.getTime() - EXEC_RENEW_MARGIN_MS > clock.now().getTime();
      return {
        async current() {
          if (!cached || !fresh(cached)) {
            running ??= runExecPlugin(auth.exec, {
              server: connection.server.href,
              ...(connection.certificateAuthority ? { certificateAuthority: connection.certificateAuthority } : {}),
            }).finally(() => {
              running = undefined;
            });
            cached = await running;
          }
          return {
            ...(cached.token ? { bearer: cached.token } : {}),
            ...(cached.clientCertificate && cached.clientKey ? { certificate: cached.clientCertificate, key: cached.clientKey } : {}),
          };
        },
        invalidate: () => {
          cached = undefined;
        },
      };
    }
  }
}

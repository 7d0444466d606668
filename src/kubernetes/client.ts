import got, { type Got, HTTPError, type Method, RequestError } from 'got';

import { systemClock } from '../clock.js';
import type { Env } from '../common/env-variables.js';
import { KubernetesError } from '../errors.js';
import { remoteText } from '../http/remote-text.js';
import { limitResponseSize } from '../http/response-size.js';
import type { Logger } from '../log/logger.js';
import { type Connection, type ConnectionOptions, resolveConnection } from './connection.js';
import { connectionCredentials } from './credentials.js';

/** How a PATCH body is to be read: server-side apply, or a strategic merge, or a JSON merge patch. */
export type PatchKind = 'apply' | 'strategic' | 'merge';

const PATCH_TYPES: Record<PatchKind, string> = {
  apply: 'application/apply-patch+yaml',
  strategic: 'application/strategic-merge-patch+json',
  merge: 'application/merge-patch+json',
};

/** The field manager of every write: what `kubectl get -o yaml --show-managed-fields` shows as ours. */
export const FIELD_MANAGER = 'token-rotator';

/** Objects per page of a list: kubectl's default chunk size. */
export const LIST_PAGE_SIZE = 500;
/** Lists of Secrets can be large: a bound well above a namespace of them, well below harm. */
const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/**
 * The handful of REST calls token-rotator makes, over got, as kubectl would make them. Paths are
 * API paths (`/api/v1/namespaces/apps/secrets/x`). Failures are KubernetesErrors with the Status
 * reason; a message from the API server is masked, since an Invalid one can echo a value.
 */
export interface KubernetesClient {
  /** The namespace a configuration means when it names none. */
  namespace: string;
  /** `in-cluster service account at https://10.0.0.1:443`: for messages. */
  describe: string;
  /** Undefined for 404. */
  get<T>(path: string, options?: { signal?: AbortSignal }): Promise<T | undefined>;
  list<T>(path: string, options?: { labelSelector?: string; signal?: AbortSignal }): Promise<T[]>;
  create<T>(path: string, body: unknown, options?: { signal?: AbortSignal }): Promise<T>;
  /** PUT: conditional on the body's `metadata.resourceVersion` (409 Conflict when it moved). */
  replace<T>(path: string, body: unknown, options?: { signal?: AbortSignal }): Promise<T>;
  /** `dryRun`: the API server checks permission and validity, and changes nothing. */
  patch<T>(path: string, body: unknown, kind: PatchKind, options?: { force?: boolean; dryRun?: boolean; signal?: AbortSignal }): Promise<T>;
  /** Undefined for 404. */
  delete(path: string, options?: { resourceVersion?: string; signal?: AbortSignal }): Promise<void>;
}

export function createKubernetesClient(connection: Connection, options: { logger: Logger; timeoutMs?: number }): KubernetesClient {
  const credentials = connectionCredentials(connection, systemClock);
  const http: Got = got.extend({
    prefixUrl: connection.server.href,
    timeout: { request: options.timeoutMs ?? 30_000 },
    headers: { 'user-agent': 'token-rotator', accept: 'application/json' },
    responseType: 'json',
    // A bearer never follows a redirect: the API server does not send one.
    followRedirect: false,
    handlers: [limitResponseSize(MAX_RESPONSE_BYTES)],
    https: {
      ...(connection.certificateAuthority ? { certificateAuthority: connection.certificateAuthority } : {}),
      rejectUnauthorized: !connection.insecureSkipTlsVerify,
      ...(connection.tlsServerName ? { servername: connection.tlsServerName } : {}),
    },
    // Reads and server-side apply are idempotent; creates and conditional replaces are left to callers.
    retry: { limit: 2, methods: ['GET', 'PATCH'], statusCodes: [429, 500, 502, 503, 504] },
    hooks: {
      beforeRequest: [
        async (request) => {
          const credential = await credentials.current();
          if (credential.bearer) request.headers.authorization = `Bearer ${credential.bearer.reveal()}`;
          if (credential.certificate && credential.key) {
            request.https = { ...request.https, certificate: credential.certificate, key: credential.key.reveal() };
          }
        },
      ],
      afterResponse: [
        (response, retryWithMergedOptions) => {
          const context = response.request.options.context as { reauthenticated?: boolean };
          if (response.statusCode === 401 && !context.reauthenticated) {
            credentials.invalidate();
            return retryWithMergedOptions({ context: { reauthenticated: true } });
          }
          return response;
        },
      ],
    },
  });
  if (connection.insecureSkipTlsVerify)
    options.logger.warn({ kubernetes: connection.describe }, 'the kubeconfig turns off TLS certificate checks for the API server');

  async function call<T>(
    method: Method,
    path: string,
    init: { json?: unknown; searchParams?: Record<string, string>; contentType?: string; signal?: AbortSignal },
  ): Promise<T> {
    try {
      const response = await http<T>(path.replace(/^\//, ''), {
        method,
        ...(init.json !== undefined ? { json: init.json } : {}),
        ...(init.searchParams ? { searchParams: init.searchParams } : {}),
        ...(init.contentType ? { headers: { 'content-type': init.contentType } } : {}),
        ...(init.signal ? { signal: init.signal } : {}),
        context: {},
      });
      return response.body;
    } catch (error) {
      throw translate(error, method, path, connection);
    }
  }

  return {
    namespace: connection.namespace,
    describe: `${connection.describe} at ${connection.server.origin}`,
    async get(path, options = {}) {
      try {
        return await call('GET', path, options);
      } catch (error) {
        if (error instanceof KubernetesError && error.status === 404) return undefined;
        throw error;
      }
    },
    async list<T>(path: string, options: { labelSelector?: string; signal?: AbortSignal } = {}) {
      // In pages, as kubectl lists: each answer stays far below the response bound, however many
      // objects match, and the API server serves a large collection in chunks it can afford.
      const items: T[] = [];
      let next: string | undefined;
      do {
        const body = await call<{ items?: T[]; metadata?: { continue?: string } }>('GET', path, {
          searchParams: {
            limit: String(LIST_PAGE_SIZE),
            ...(options.labelSelector ? { labelSelector: options.labelSelector } : {}),
            ...(next ? { continue: next } : {}),
          },
          ...(options.signal ? { signal: options.signal } : {}),
        });
        items.push(...(body.items ?? []));
        next = body.metadata?.continue || undefined;
      } while (next);
      return items;
    },
    create: (path, body, options = {}) => call('POST', path, { json: body, ...options }),
    replace: (path, body, options = {}) => call('PUT', path, { json: body, ...options }),
    patch: (path, body, kind, options = {}) =>
      call('PATCH', path, {
        json: body,
        contentType: PATCH_TYPES[kind],
        searchParams: {
          fieldManager: FIELD_MANAGER,
          ...(kind === 'apply' && options.force ? { force: 'true' } : {}),
          ...(options.dryRun ? { dryRun: 'All' } : {}),
        },
        ...(options.signal ? { signal: options.signal } : {}),
      }),
    async delete(path, options = {}) {
      try {
        await call('DELETE', path, {
          ...(options.resourceVersion ? { json: { preconditions: { resourceVersion: options.resourceVersion } } } : {}),
          ...(options.signal ? { signal: options.signal } : {}),
        });
      } catch (error) {
        if (error instanceof KubernetesError && error.status === 404) return;
        throw error;
      }
    },
  };
}

/** A Status body's reason and message, or the transport's failure, never the request (it holds the bearer). */
function translate(error: unknown, method: string, path: string, connection: Connection): Error {
  if ((error as Error)?.name === 'AbortError') return error as Error;
  const where = `${method} ${path}`;
  if (error instanceof HTTPError) {
    const status = error.response.statusCode;
    const body = error.response.body as { reason?: unknown; message?: unknown } | undefined;
    const reason = typeof body?.reason === 'string' ? body.reason : undefined;
    const message = typeof body?.message === 'string' ? remoteText(body.message) : undefined;
    return new KubernetesError(
      `Kubernetes API ${where}: ${status}${reason ? ` ${reason}` : ''}${message ? `: ${message}` : ''}${hint(status)}`,
      {
        status,
        ...(reason ? { reason } : {}),
      },
    );
  }
  // The credentials are had in the beforeRequest hook (an exec plugin, a token file): got wraps
  // their failure in a RequestError, and it is that reason, not the API server's reach, to report.
  if (error instanceof RequestError && error.cause instanceof KubernetesError) return error.cause;
  if (error instanceof RequestError) {
    return new KubernetesError(
      `Kubernetes API ${where}: cannot reach ${connection.server.origin} (${error.code}) through ${connection.describe}`,
    );
  }
  return error instanceof KubernetesError
    ? error
    : new KubernetesError(`Kubernetes API ${where}: ${String((error as Error)?.message ?? error)}`);
}

function hint(status: number): string {
  switch (status) {
    case 401:
      return ' (the credentials were refused: check the kubeconfig user or the service account token)';
    case 403:
      return ' (the service account lacks a permission: see the RBAC rules in config/kubernetes)';
    default:
      return '';
  }
}

let shared: { env: Env; client: Promise<KubernetesClient> } | undefined;

/**
 * One client per process for every Kubernetes feature (sinks, reloads, the state backend), opened
 * on first use, and on the next use again when that failed. Without a cluster or a kubeconfig, a clear error.
 */
export function kubernetesClient(env: Env, logger: Logger, options: ConnectionOptions = {}): Promise<KubernetesClient> {
  if (shared?.env === env) return shared.client;
  const client = (async () => {
    const connection = resolveConnection(env, options);
    if (!connection) {
      throw new KubernetesError(
        'no Kubernetes here: not in a cluster (no service account), and no kubeconfig (KUBECONFIG or ~/.kube/config)',
      );
    }
    return createKubernetesClient(connection, { logger });
  })();
  const entry = { env, client };
  shared = entry;
  // A failure is not kept: a kubeconfig missing or half-written at that moment would otherwise fail
  // every later use of a long-lived daemon. Only this entry is dropped, not a newer one for another env.
  client.catch(() => {
    if (shared === entry) shared = undefined;
  });
  return client;
}

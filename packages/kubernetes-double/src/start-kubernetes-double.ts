import { randomBytes } from 'node:crypto';

import type { ForbiddenAccess } from './access-rules.js';
import { createApiHandler } from './api-handler.js';
import { type Clock, systemClock } from './clock.js';
import { listenDualProtocol } from './dual-protocol-server.js';
import { cloneJson, type JsonObject } from './json.js';
import { type KubeconfigOptions, kubeconfigYaml } from './kubeconfig.js';
import { isLoopbackHost } from './loopback.js';
import { ObjectStore } from './object-store.js';
import { Registry, typeOfObject, withTypeMeta } from './registry.js';
import type { RecordedKubeRequest } from './request-log.js';
import { resourceTypeByName } from './resource-types.js';
import { selfSignedCertificate } from './self-signed-certificate.js';

export interface KubernetesDoubleOptions {
  /** A loopback address; 127.0.0.1 when absent. */
  host?: string;
  /** 0 or absent: a free port chosen by the OS. */
  port?: number;
  /** Namespaces to create besides `default`, which always exists. */
  namespaces?: string[];
  /** The bearer token the double accepts; random when absent. */
  token?: string;
  /** The user that token authenticates as, named in Forbidden messages; `token-rotator-double` when absent. */
  user?: string;
  /** Verbs refused with 403 Forbidden from the start; `forbidden` on the double changes them later. */
  forbidden?: ForbiddenAccess[];
  /** RBAC objects that alone say what the user may do (see `rbac` on the double); everything is allowed without them. */
  rbac?: JsonObject[];
  clock?: Clock;
}

/** Direct access to the stored objects, for seeding and checking them in tests (no API rules apply). */
export interface KubernetesObjects {
  /** A copy of the stored object, or undefined. `resource` is the plural: 'secrets', 'leases'... */
  get(resource: string, namespace: string | undefined, name: string): JsonObject | undefined;
  /** Copies of the stored objects of a resource, in one namespace or all. */
  list(resource: string, namespace?: string): JsonObject[];
  /**
   * Stores `object` (its apiVersion and kind say where) as given, creating or replacing: decoded
   * and defaulted like a write (stringData folded), with a uid, creationTimestamp and a new
   * resourceVersion, but not validated and without managedFields unless it has them (like an
   * object that predates field management: the first server-side apply makes its fields owned by
   * `before-first-apply`). Answers what was stored.
   */
  put(object: JsonObject): JsonObject;
  delete(resource: string, namespace: string | undefined, name: string): boolean;
}

export interface KubernetesDouble {
  /** The API server URL, plain http on loopback. */
  url: string;
  /** The same server over TLS (same port), as kubeconfig() points at it. */
  httpsUrl: string;
  /** PEM of the self-signed certificate the TLS side presents: the CA to trust for httpsUrl. */
  ca: string;
  token: string;
  /** The default namespace: 'default'. */
  namespace: string;
  /**
   * A kubeconfig for the double: httpsUrl, its CA and the bearer token (so it holds the token:
   * write it to a 0600 file). Https because client-go, so kubectl, never sends credentials to a
   * plain-http server (clientcmd reads a user's auth only for TLS transports).
   */
  kubeconfig(options?: KubeconfigOptions): string;
  objects: KubernetesObjects;
  /** Every request, in order of its answer, without bodies; `verb` tells a list from a get. */
  requests: RecordedKubeRequest[];
  /**
   * What the user may not do, answered 403 Forbidden with the API server's Status, as RBAC would
   * (`{ verb: 'list', resource: 'secrets', namespace: 'apps' }`). Read at every request: push to it
   * or empty it between calls.
   */
  forbidden: ForbiddenAccess[];
  /**
   * Roles, ClusterRoles, RoleBindings and ClusterRoleBindings, as `kubectl apply` would be given
   * them: when set, the user may do only what they grant it, as under the RBAC authorizer,
   * resourceNames included (a ServiceAccount subject is the user `system:serviceaccount:<ns>:<name>`:
   * name the user so). Undefined: everything is allowed. Read at every request, like `forbidden`.
   */
  rbac: JsonObject[] | undefined;
  close(): Promise<void>;
}

/**
 * A Kubernetes API server double on one loopback port: Secrets, Namespaces (read only), Leases,
 * Deployments, StatefulSets and DaemonSets, with the real server's wire protocol for the calls
 * token-rotator and kubectl make: discovery (legacy and aggregated), OpenAPI v3 as far as kubectl
 * reads it, Status errors, resourceVersion preconditions, field management and server-side apply,
 * the four patch types, Tables for kubectl's printers. No controllers run: what is stored is what
 * was written.
 */
export async function startKubernetesDouble(options: KubernetesDoubleOptions = {}): Promise<KubernetesDouble> {
  const host = options.host ?? '127.0.0.1';
  if (!isLoopbackHost(host.includes(':') ? `[${host}]` : host))
    throw new Error(`the Kubernetes double listens on loopback only, not ${host}`);
  const clock = options.clock ?? systemClock;
  const token = options.token ?? randomBytes(24).toString('base64url');
  const store = new ObjectStore();
  const registry = new Registry(store, clock);
  const requests: RecordedKubeRequest[] = [];
  const forbidden: ForbiddenAccess[] = [...(options.forbidden ?? [])];
  let rbac = options.rbac;

  for (const name of new Set(['default', ...(options.namespaces ?? [])])) {
    registry.seed({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  }

  let serverAddress = '';
  const handle = createApiHandler({
    token,
    registry,
    store,
    clock,
    requests,
    access: () => ({ forbidden, ...(rbac ? { rbac } : {}) }),
    user: options.user ?? 'token-rotator-double',
    serverAddress: () => serverAddress,
  });
  const tls = selfSignedCertificate(
    [...new Set(['127.0.0.1', '::1', host])].filter((h) => h !== 'localhost'),
    ['localhost'],
  );
  const server = await listenDualProtocol(host, options.port ?? 0, tls, (req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' }).end('{"message":"double error"}');
      else res.destroy();
    });
  });
  serverAddress = `${host.includes(':') ? `[${host}]` : host}:${server.port}`;
  const url = `http://${serverAddress}`;
  const httpsUrl = `https://${serverAddress}`;

  const typeNamed = (resource: string) => {
    const type = resourceTypeByName(resource);
    if (!type) throw new Error(`the double does not serve ${resource}`);
    return type;
  };

  return {
    url,
    httpsUrl,
    ca: tls.cert,
    token,
    namespace: 'default',
    kubeconfig: (kubeconfigOptions) => kubeconfigYaml(httpsUrl, tls.cert, token, kubeconfigOptions),
    objects: {
      get: (resource, namespace, name) => {
        const type = typeNamed(resource);
        const object = store.get(type, namespace, name);
        return object ? withTypeMeta(type, cloneJson(object)) : undefined;
      },
      list: (resource, namespace) => {
        const type = typeNamed(resource);
        return store.list(type, namespace).map((o) => withTypeMeta(type, cloneJson(o)));
      },
      put: (object) => {
        typeOfObject(object);
        return registry.seed(object);
      },
      delete: (resource, namespace, name) => store.remove(typeNamed(resource), namespace, name),
    },
    requests,
    forbidden,
    get rbac() {
      return rbac;
    },
    set rbac(objects) {
      rbac = objects;
    },
    close: () => server.close(),
  };
}

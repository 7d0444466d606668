import { createRequire } from 'node:module';

import {
  loadPackageDefinition,
  type sendUnaryData,
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type ServiceClientConstructor,
  type ServiceError,
  status,
} from '@grpc/grpc-js';
import { fromJSON } from '@grpc/proto-loader';

import { startGoogleHttp, type WorkloadIdentity } from './google-http.js';
import { Iam } from './iam.js';
import { Identities, type ServiceAccountKeyFile } from './identities.js';
import { RpcError, unauthenticated } from './rpc-error.js';
import { type Project, SecretStore, type StoredSecret } from './secret-store.js';
import { doubleCertificate } from './trust.js';

export { RpcError, status };
export { README_ROLE } from './iam.js';
export { trustDoubleCertificate } from './trust.js';
export type { ServiceAccountKeyFile, StoredSecret };

/** One call as the double saw it: never a payload, a header value or a token. */
export interface RecordedCall {
  service: 'SecretManagerService' | 'Projects';
  method: string;
  /** The resource name the request named, as sent. */
  resource: string | undefined;
  /** `serviceAccount:…`, once authenticated. */
  member?: string;
  /** How the caller authenticated. */
  via?: 'self-signed-jwt' | 'access-token';
  /** The gRPC status answered (0 for OK). */
  code: number;
  /** The x-goog-api-client header: which library and transport sent it (`gax/… gapic/… grpc/…`). */
  apiClient: string;
}

export interface SecretManagerDoubleOptions {
  /** Projects the double knows: id and number. */
  projects?: { id: string; number: string; secretManagerEnabled?: boolean; resourceManagerEnabled?: boolean }[];
}

const requireJson = createRequire(import.meta.url);
const SECRET_MANAGER_HOST = 'secretmanager.googleapis.com';
const RESOURCE_MANAGER_HOST = 'cloudresourcemanager.googleapis.com';

type Unary = (call: ServerUnaryCall<Record<string, unknown>, unknown>, callback: sendUnaryData<unknown>) => void;

/**
 * The services as the package ships them (protos.json, with google.iam.v1), plus Cloud Resource
 * Manager's Projects service with its one method the sink calls, declared as projects.proto does.
 */
function serviceDefinitions() {
  const json = structuredClone(requireJson('@google-cloud/secret-manager/build/protos/protos.json')) as {
    nested: { google: { nested: { cloud: { nested: Record<string, unknown> } } } };
  };
  json.nested.google.nested.cloud.nested['resourcemanager'] = {
    nested: {
      v3: {
        nested: {
          Projects: {
            methods: {
              TestIamPermissions: {
                requestType: 'google.iam.v1.TestIamPermissionsRequest',
                responseType: 'google.iam.v1.TestIamPermissionsResponse',
              },
            },
          },
        },
      },
    },
  };
  // As a server reads requests: absent fields stay absent (defaults would hide a missing etag or checksum).
  const loaded = loadPackageDefinition(
    fromJSON(json as never, { keepCase: false, longs: String, enums: String, defaults: false, oneofs: true }),
  ) as unknown as {
    google: {
      cloud: {
        secretmanager: { v1: { SecretManagerService: ServiceClientConstructor } };
        resourcemanager: { v3: { Projects: ServiceClientConstructor } };
      };
    };
  };
  return {
    secretManager: loaded.google.cloud.secretmanager.v1.SecretManagerService.service,
    projects: loaded.google.cloud.resourcemanager.v3.Projects.service,
  };
}

/**
 * Google Cloud Secret Manager on loopback, over gRPC with TLS (a self-signed certificate: trust it
 * with `trustDoubleCertificate` from `vi.hoisted`, see trust.ts), driven by the real
 * @google-cloud/secret-manager client; a GCE/GKE metadata server on plain HTTP beside it. Every call is authenticated and authorized (see README.md).
 */
export async function startSecretManagerDouble(options: SecretManagerDoubleOptions = {}) {
  const iam = new Iam();
  const identities = new Identities();
  let workload: WorkloadIdentity | undefined;
  const http = await startGoogleHttp(identities, () => workload);
  const store = new SecretStore(iam);
  for (const project of options.projects ?? [{ id: 'token-rotator-test', number: '424242424242' }])
    store.addProject(project.id, project.number, project);

  const requests: RecordedCall[] = [];
  const interceptors = new Map<string, ((request: Record<string, unknown>) => void)[]>();
  const control = { unavailable: false };

  const handle =
    (
      service: RecordedCall['service'],
      host: string,
      method: string,
      run: (member: string, request: Record<string, unknown>) => unknown,
    ): Unary =>
    (call, callback) => {
      const request = call.request;
      const secret = request['secret'] as { name?: string } | undefined;
      const record: RecordedCall = {
        service,
        method,
        resource: (request['name'] ?? request['parent'] ?? request['resource'] ?? secret?.name) as string | undefined,
        code: 0,
        apiClient: String(call.metadata.get('x-goog-api-client')[0] ?? ''),
      };
      (async () => {
        if (control.unavailable) throw new RpcError(status.UNAVAILABLE, 'The service is currently unavailable.');
        const auth = await identities.authenticate(String(call.metadata.get('authorization')[0] ?? ''), host);
        const fullMethod =
          service === 'Projects'
            ? `google.cloud.resourcemanager.v3.Projects.${method}`
            : `google.cloud.secretmanager.v1.SecretManagerService.${method}`;
        if ('failure' in auth) throw unauthenticated(auth.failure, fullMethod);
        record.member = auth.member;
        record.via = auth.via;
        const once = interceptors.get(method)?.shift();
        once?.(request);
        return run(auth.member, request);
      })().then(
        (response) => {
          requests.push(record);
          callback(null, response);
        },
        (error: unknown) => {
          const rpc = error instanceof RpcError ? error : new RpcError(status.INTERNAL, `Internal error encountered: ${String(error)}`);
          record.code = rpc.code;
          requests.push(record);
          callback(rpc.toServiceError() as ServiceError);
        },
      );
    };

  const sm = (method: string, run: (member: string, request: Record<string, unknown>) => unknown) =>
    handle('SecretManagerService', SECRET_MANAGER_HOST, method, run);
  const definitions = serviceDefinitions();
  const server = new Server();
  server.addService(definitions.secretManager, {
    GetSecret: sm('GetSecret', (m, r) => store.getSecret(m, r)),
    CreateSecret: sm('CreateSecret', (m, r) => store.createSecret(m, r)),
    UpdateSecret: sm('UpdateSecret', (m, r) => store.updateSecret(m, r)),
    DeleteSecret: sm('DeleteSecret', (m, r) => store.deleteSecret(m, r)),
    AddSecretVersion: sm('AddSecretVersion', (m, r) => store.addSecretVersion(m, r)),
    AccessSecretVersion: sm('AccessSecretVersion', (m, r) => store.accessSecretVersion(m, r)),
    GetSecretVersion: sm('GetSecretVersion', (m, r) => store.getSecretVersion(m, r)),
    ListSecretVersions: sm('ListSecretVersions', (m, r) => store.listSecretVersions(m, r)),
    DisableSecretVersion: sm('DisableSecretVersion', (m, r) => store.setVersionState(m, 'DisableSecretVersion', r)),
    EnableSecretVersion: sm('EnableSecretVersion', (m, r) => store.setVersionState(m, 'EnableSecretVersion', r)),
    DestroySecretVersion: sm('DestroySecretVersion', (m, r) => store.setVersionState(m, 'DestroySecretVersion', r)),
    TestIamPermissions: sm('TestIamPermissions', (m, r) => store.testIamPermissions(m, r)),
  });
  server.addService(definitions.projects, {
    TestIamPermissions: handle('Projects', RESOURCE_MANAGER_HOST, 'TestIamPermissions', (m, r) => store.testProjectPermissions(m, r)),
  });
  const certificate = doubleCertificate();
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(
      '127.0.0.1:0',
      ServerCredentials.createSsl(null, [{ cert_chain: Buffer.from(certificate.cert), private_key: Buffer.from(certificate.key) }], false),
      (error, bound) => (error ? reject(error) : resolve(bound)),
    ),
  );

  const projectOf = (ref: string): Project => {
    const project = store.project(ref);
    if (!project) throw new Error(`the double knows no project ${ref}`);
    return project;
  };
  /** `projects/123` or `projects/123/secrets/s`, from a project id or number and a secret id. */
  const resource = (at: { project: string; secret?: string }) => SecretStore.chain(projectOf(at.project), at.secret).at(-1)!;

  return {
    /** `localhost:port`: a sink's `endpoint` (the certificate names localhost). */
    endpoint: `localhost:${port}`,
    /** The CA to trust (PEM): the certificate itself. */
    ca: certificate.cert,
    /** For GCE_METADATA_HOST: the metadata server. */
    metadataHost: http.host,
    requests,
    httpRequests: http.requests,
    /** How many access tokens the metadata server issued. */
    issued: identities.issued,
    store,
    control,

    /** A service account with a new key, granted `grants` (permissions or roles) on the project. */
    serviceAccount(name: string, grants: readonly string[] = [], project = [...store.projects.values()][0]!.id): ServiceAccountKeyFile {
      const email = `${name}@${project}.iam.gserviceaccount.com`;
      const keyFile = identities.serviceAccount(email, project);
      if (grants.length > 0) iam.grant(`serviceAccount:${email}`, resource({ project }), grants);
      return keyFile;
    },
    deleteKey: (kid: string) => identities.deleteKey(kid),
    /** The Google service account the metadata server gives tokens for, as Workload Identity binds a pod's. */
    workloadIdentity(email: string | undefined, project = [...store.projects.values()][0]!) {
      workload = email ? { email, projectId: project.id, numericProjectId: project.number } : undefined;
    },
    grant: (member: string, at: { project: string; secret?: string }, grants: string | readonly string[]) =>
      iam.grant(member, resource(at), grants),
    deny: (member: string, at: { project: string; secret?: string }, permissions: string | readonly string[]) =>
      iam.deny(member, resource(at), permissions),
    /** Runs `action` on the next call of `method`, before the call is served; it may throw an RpcError to fail it. */
    intercept(method: string, action: (request: Record<string, unknown>) => void) {
      interceptors.set(method, [...(interceptors.get(method) ?? []), action]);
    },
    /** The secret as stored, or undefined. */
    secret: (project: string, secret: string) => store.secret(project, secret),
    /** How many versions the secret has (any state): a duplicate write shows here. */
    versionCount: (project: string, secret: string) => store.secret(project, secret)?.versions.length ?? 0,
    /** The latest version's data as text, whatever its state; undefined when none or destroyed. */
    latestText: (project: string, secret: string) => store.secret(project, secret)?.versions.at(-1)?.data?.toString('utf8'),

    async close() {
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      server.forceShutdown();
      await http.close();
    },
  };
}

export type SecretManagerDouble = Awaited<ReturnType<typeof startSecretManagerDouble>>;

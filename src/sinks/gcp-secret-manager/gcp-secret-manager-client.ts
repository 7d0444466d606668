import { type protos, SecretManagerServiceClient } from '@google-cloud/secret-manager';
import { GoogleAuth, loggingUtils } from 'google-gax';

import { SinkError } from '../../errors.js';
import { Secret } from '../../secret.js';
import { refuseOtherToken } from '../ownership.js';
import type { SinkClient, SinkOpenContext, StoredTokenMeta, TokenMeta } from '../sink.js';
import { metadataValues, storedMetadata } from './../token-metadata.js';
import { crc32c } from './crc32c.js';
import {
  describeGcpSecretManager as describe,
  type GcpSecretManagerSinkConfig,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  secretName,
} from './gcp-secret-manager-config.js';
import { type CallSite, Code, serverText, sinkErrorFor, statusOf } from './google-errors.js';
import { projectPermissions } from './project-permissions.js';

type ApiSecret = protos.google.cloud.secretmanager.v1.ISecret;

/*
 * google-gax and google-auth-library log every request and response, payloads included, to stderr
 * when GOOGLE_SDK_NODE_LOGGING is set: a secret version's data would be printed. Their debug
 * logging is switched off for this process (google-logging-utils: a null backend disables it).
 */
loggingUtils.setBackend(null);

/**
 * Beside the secret, never in it: what drift repair and a lost state are recovered from. Versions
 * carry no metadata of their own, so the secret's annotations describe one version, named by
 * `version`; they are believed only while that version is the latest. Annotation keys allow letters,
 * digits, `-`, `_` and `.` (no `/`), values are free text: an ISO time or a token id fits, where a
 * label (lowercase, 63 characters) would not.
 */
export const ANNOTATIONS = {
  tokenName: 'token-rotator.token-name',
  tokenId: 'token-rotator.token-id',
  expiresAt: 'token-rotator.expires-at',
  rotationId: 'token-rotator.rotation-id',
  rotatedAt: 'token-rotator.rotated-at',
  version: 'token-rotator.version',
} as const;

/** What writing needs on the secret, and on the project as well when the secret is still to be created. */
export const WRITE_PERMISSIONS = ['secretmanager.versions.add', 'secretmanager.versions.access', 'secretmanager.secrets.update'];
export const CREATE_PERMISSION = 'secretmanager.secrets.create';

const DEFAULT_HOST = 'secretmanager.googleapis.com';
const RESOURCE_MANAGER_HOST = 'cloudresourcemanager.googleapis.com';
const CLOUD_PLATFORM = 'https://www.googleapis.com/auth/cloud-platform';
/** Per call: a sink that does not answer must fail the delivery, not hold the rotation for gax's default ten minutes. */
const CALL_TIMEOUT_MS = 30_000;

/** The latest version, as `versions/latest` gives it: what every reader of the secret gets. */
type Latest =
  | { kind: 'value'; version: number; payload: Buffer }
  /** The secret has no version yet. */
  | { kind: 'none' }
  /** The latest version is disabled or destroyed: `latest` gives readers an error, not a value. */
  | { kind: 'unusable'; why: string };

/** The secret changed between our read and our update (its etag moved): the write starts over. */
class ChangedMeanwhile extends Error {}

export function gcpSecretManagerClient(context: SinkOpenContext): SinkClient<GcpSecretManagerSinkConfig> {
  const clients = new Map<string, Promise<SecretManagerServiceClient>>();

  /**
   * Google's Application Default Credentials: GOOGLE_APPLICATION_CREDENTIALS, gcloud's
   * application-default login, then the metadata server (Workload Identity on GKE), as
   * google-auth-library reads them from the process environment. A key file the run's environment
   * names but the process's does not (a dotenv file's GOOGLE_APPLICATION_CREDENTIALS) is loaded the
   * way that first step loads it; one auth per client, as each sets its own audience on it.
   */
  async function auth(): Promise<GoogleAuth> {
    const keyFile = context.env['GOOGLE_APPLICATION_CREDENTIALS'];
    if (!keyFile || keyFile === process.env['GOOGLE_APPLICATION_CREDENTIALS']) return new GoogleAuth();
    return new GoogleAuth({ authClient: await new GoogleAuth()._getApplicationCredentialsFromFilePath(keyFile) });
  }

  const where = (config: GcpSecretManagerSinkConfig) => {
    const [host, port] = splitEndpoint(config.endpoint ?? `${DEFAULT_HOST}:443`);
    return { host, port, custom: config.endpoint !== undefined };
  };

  function api(config: GcpSecretManagerSinkConfig): Promise<SecretManagerServiceClient> {
    const key = config.endpoint ?? '';
    let client = clients.get(key);
    if (!client) {
      const { host, port, custom } = where(config);
      client = auth().then(async (credentials) => {
        const created = new SecretManagerServiceClient({ auth: credentials, ...(custom ? { apiEndpoint: host, port } : {}) });
        // Its channel, with the credentials, is set up here, where a failure is ours to handle: the
        // generated methods rethrow a failed set-up from a detached promise, an unhandled rejection.
        try {
          await created.initialize();
        } catch (error) {
          await created.close().catch(() => undefined);
          throw error;
        }
        return created;
      });
      // Credentials that cannot be loaded fail this call, and are looked for again by the next.
      client.catch(() => clients.delete(key));
      clients.set(key, client);
    }
    return client;
  }

  /**
   * Who the credentials are, for "grant it to …", as the loaded credentials say without another
   * call (a key's service account, a federation's impersonated one); undefined otherwise. Asked of
   * the endpoint's own client each time, not kept for the sink client: each endpoint's client
   * loaded its credentials when it was made, and a key file changed in between names another
   * account. Cheap: GoogleAuth keeps the credentials it loaded.
   */
  async function whoAmI(config: GcpSecretManagerSinkConfig): Promise<string | undefined> {
    try {
      const credentials = await (await api(config)).auth.getClient();
      const email = (credentials as { email?: unknown }).email;
      if (typeof email === 'string' && email) return email;
      const federated = (credentials as { getServiceAccountEmail?: () => string | null }).getServiceAccountEmail?.();
      return federated ?? undefined;
    } catch {
      return undefined; // the message then says "the credentials in use"
    }
  }

  function site(config: GcpSecretManagerSinkConfig, doing: string, permission: string, onProject = false): Omit<CallSite, 'principal'> {
    return {
      describe: describe(config),
      doing,
      permission,
      resource: onProject ? `projects/${config.project}` : secretName(config),
      project: config.project,
      endpoint: config.endpoint ?? DEFAULT_HOST,
    };
  }

  /** One API call: its failure as an actionable SinkError, an abort as the AbortError it is. */
  async function call<T>(
    config: GcpSecretManagerSinkConfig,
    where: Omit<CallSite, 'principal'>,
    signal: AbortSignal | undefined,
    run: (options: { timeout: number; signal?: AbortSignal }) => Promise<T>,
  ): Promise<T> {
    signal?.throwIfAborted();
    try {
      return await run({ timeout: CALL_TIMEOUT_MS, ...(signal ? { signal } : {}) });
    } catch (error) {
      signal?.throwIfAborted();
      if (error instanceof ChangedMeanwhile) throw error;
      const who = statusOf(error) === Code.PERMISSION_DENIED ? await whoAmI(config) : undefined;
      throw sinkErrorFor({ ...where, principal: who }, error);
    }
  }

  /** The secret's metadata; undefined when it does not exist. */
  async function getSecret(config: GcpSecretManagerSinkConfig, signal: AbortSignal | undefined): Promise<ApiSecret | undefined> {
    return call(config, site(config, 'cannot read', 'secretmanager.secrets.get'), signal, async (options) => {
      try {
        const [secret] = await (await api(config)).getSecret({ name: secretName(config) }, options);
        return secret;
      } catch (error) {
        if (statusOf(error) === Code.NOT_FOUND) return undefined;
        throw error;
      }
    });
  }

  async function latest(config: GcpSecretManagerSinkConfig, signal: AbortSignal | undefined): Promise<Latest> {
    return call(config, site(config, 'cannot read', 'secretmanager.versions.access'), signal, async (options) => {
      let response: protos.google.cloud.secretmanager.v1.IAccessSecretVersionResponse;
      try {
        [response] = await (await api(config)).accessSecretVersion({ name: `${secretName(config)}/versions/latest` }, options);
      } catch (error) {
        // "not found or has no versions"; "Secret Version [...] is in DISABLED state."
        if (statusOf(error) === Code.NOT_FOUND) return { kind: 'none' as const };
        if (statusOf(error) === Code.FAILED_PRECONDITION) return { kind: 'unusable' as const, why: serverText(error) };
        throw error;
      }
      const payload = bytes(response.payload?.data);
      const sent = response.payload?.dataCrc32c;
      if (sent !== undefined && sent !== null && BigInt(sent.toString()) !== BigInt(crc32c(payload))) {
        throw new SinkError(
          `cannot read ${describe(config)}: the latest version's data does not match its CRC32C checksum (corrupted in transit); try again`,
        );
      }
      return { kind: 'value' as const, version: versionNumber(response.name), payload };
    });
  }

  async function create(config: GcpSecretManagerSinkConfig, signal: AbortSignal | undefined): Promise<ApiSecret> {
    return call(config, site(config, 'cannot create', 'secretmanager.secrets.create', true), signal, async (options) => {
      try {
        const [created] = await (
          await api(config)
        ).createSecret(
          {
            parent: `projects/${config.project}`,
            secretId: config.secret,
            secret: {
              replication:
                config.locations.length > 0
                  ? { userManaged: { replicas: config.locations.map((location) => ({ location })) } }
                  : { automatic: {} },
              labels: { ...config.labels, [MANAGED_BY_LABEL]: MANAGED_BY },
            },
          },
          options,
        );
        context.logger.info({ sink: describe(config) }, 'created the secret');
        return created;
      } catch (error) {
        // Another writer created it between our read and this call: read it again and decide anew.
        if (statusOf(error) === Code.ALREADY_EXISTS) throw new ChangedMeanwhile();
        throw error;
      }
    });
  }

  async function addVersion(config: GcpSecretManagerSinkConfig, secret: Secret, signal: AbortSignal | undefined): Promise<number> {
    const data = Buffer.from(secret.reveal(), 'utf8');
    return call(config, site(config, 'cannot add a version to', 'secretmanager.versions.add'), signal, async (options) => {
      const [version] = await (
        await api(config)
      ).addSecretVersion({ parent: secretName(config), payload: { data, dataCrc32c: crc32c(data) } }, options);
      const number = versionNumber(version.name);
      context.logger.info({ sink: describe(config), version: number }, 'added a secret version');
      return number;
    });
  }

  /** Labels and annotations, replaced as whole maps (the mask's granularity), guarded by the etag read. */
  async function updateMetadata(
    config: GcpSecretManagerSinkConfig,
    existing: ApiSecret,
    labels: Record<string, string>,
    annotations: Record<string, string>,
  ): Promise<void> {
    // Not cancelled by the signal: once a version is added, its metadata had better follow it.
    await call(
      config,
      site(config, 'cannot update the labels and annotations of', 'secretmanager.secrets.update'),
      undefined,
      async (options) => {
        try {
          await (
            await api(config)
          ).updateSecret(
            {
              secret: { name: secretName(config), labels, annotations, ...(existing.etag ? { etag: existing.etag } : {}) },
              updateMask: { paths: ['labels', 'annotations'] },
            },
            options,
          );
        } catch (error) {
          if (statusOf(error) === Code.FAILED_PRECONDITION || statusOf(error) === Code.ABORTED) throw new ChangedMeanwhile();
          throw error;
        }
      },
    );
  }

  async function writeOnce(
    config: GcpSecretManagerSinkConfig,
    secret: Secret,
    meta: TokenMeta,
    signal: AbortSignal | undefined,
  ): Promise<'created' | 'updated' | 'unchanged'> {
    let existing = await getSecret(config, signal);
    let created = false;
    if (existing) {
      refuseForeign(config, existing);
      // Whichever version the annotations describe, they name the token the secret is for.
      refuseOtherToken(config, storedMetadata(existing.annotations ?? {}, ANNOTATIONS).name, meta.name, describe(config));
      refuseReplication(config, existing);
    } else {
      existing = await create(config, signal);
      created = true;
    }
    // Idempotent by content and rotation: a retry finds the version it added (the same secret is
    // the latest) and adds none; the annotations then name that version, whatever they said.
    const current: Latest = created ? { kind: 'none' } : await latest(config, signal);
    const holds = current.kind === 'value' && current.payload.equals(Buffer.from(secret.reveal(), 'utf8'));
    const version = holds ? current.version : await addVersion(config, secret, signal);
    const labels = { ...existing.labels, ...config.labels, [MANAGED_BY_LABEL]: MANAGED_BY };
    const annotations = { ...existing.annotations, ...annotationsFor(meta, version) };
    const metadataChanged = !sameEntries(labels, existing.labels ?? {}) || !sameEntries(annotations, existing.annotations ?? {});
    if (metadataChanged) await updateMetadata(config, existing, labels, annotations);
    if (created) return 'created';
    return !holds || metadataChanged ? 'updated' : 'unchanged';
  }

  return {
    async write(config, secret, meta, { signal }) {
      signal?.throwIfAborted();
      for (let attempt = 1; ; attempt++) {
        try {
          return await writeOnce(config, secret, meta, signal);
        } catch (error) {
          if (!(error instanceof ChangedMeanwhile)) throw error;
          if (attempt >= 3)
            throw new SinkError(`cannot write ${describe(config)}: it kept changing while being written (another writer?); try again`);
          context.logger.debug({ sink: describe(config) }, 'the secret changed while being written; starting over');
        }
      }
    },

    async read(config, { signal }) {
      signal?.throwIfAborted();
      const existing = await getSecret(config, signal);
      if (!existing) return undefined;
      const unowned = foreignReason(config, existing);
      const mark = unowned ? { unowned } : {};
      const current = await latest(config, signal);
      if (current.kind === 'none') return unowned ? { secret: undefined, ...mark } : undefined;
      // A disabled or destroyed latest version holds nothing readers can use: drift, which a write repairs.
      if (current.kind === 'unusable') return { secret: undefined, meta: {}, ...mark };
      const meta = unowned ? {} : storedMeta(existing.annotations ?? {}, current.version);
      return { secret: new Secret(current.payload.toString('utf8')), meta, ...mark };
    },

    async preflight(config, { signal }) {
      signal?.throwIfAborted();
      const existing = await getSecret(config, signal);
      if (existing) {
        refuseForeign(config, existing);
        refuseReplication(config, existing);
        const granted = await call(
          config,
          site(config, 'cannot check permissions on', 'secretmanager.secrets.get'),
          signal,
          async (options) => {
            const [answer] = await (
              await api(config)
            ).testIamPermissions({ resource: secretName(config), permissions: WRITE_PERMISSIONS }, options);
            return answer.permissions ?? [];
          },
        );
        const missing = WRITE_PERMISSIONS.filter((permission) => !granted.includes(permission));
        if (missing.length > 0) throw missingPermissions(config, secretName(config), missing, await whoAmI(config));
        return;
      }
      // Nothing to test on a secret that does not exist: the project says whether one may be
      // created, and what its creator will be allowed on it (a new secret inherits the project's grants).
      const wanted = [CREATE_PERMISSION, ...WRITE_PERMISSIONS];
      const { host, port, custom } = where(config);
      let granted: string[];
      try {
        signal?.throwIfAborted();
        granted = await projectPermissions(
          resourceManagerAuth(await auth()),
          custom ? { host, port } : { host: RESOURCE_MANAGER_HOST, port: 443 },
          config.project,
          wanted,
        );
      } catch (error) {
        signal?.throwIfAborted();
        // Cloud Resource Manager is another API, possibly disabled or out of reach: not a reason to fail.
        context.logger.warn(
          { sink: describe(config), reason: serverText(error) },
          `the secret does not exist yet, and Cloud Resource Manager could not say whether ${CREATE_PERMISSION} is granted on projects/${config.project}`,
        );
        return;
      }
      const missing = wanted.filter((permission) => !granted.includes(permission));
      if (missing.length > 0) throw missingPermissions(config, `projects/${config.project}`, missing, await whoAmI(config), true);
    },

    async identify(config, { signal }) {
      // Google names a secret by its project's number, however the request named the project.
      return (await getSecret(config, signal))?.name ?? undefined;
    },

    async close() {
      const all = [...clients.values()];
      clients.clear();
      await Promise.allSettled(all.map(async (client) => (await client).close()));
    },
  };
}

/**
 * The credentials for Cloud Resource Manager, set up as a generated client sets up its own: a
 * self-signed JWT with that service's audience, or its own access token.
 */
function resourceManagerAuth(auth: GoogleAuth): GoogleAuth {
  auth.useJWTAccessWithScope = true;
  auth.defaultServicePath = RESOURCE_MANAGER_HOST;
  auth.defaultScopes = [CLOUD_PLATFORM];
  return auth;
}

function missingPermissions(
  config: GcpSecretManagerSinkConfig,
  resource: string,
  missing: string[],
  principal: string | undefined,
  creating = false,
): SinkError {
  const who = principal ?? 'the credentials in use';
  const why = creating ? 'the secret does not exist yet, and creating and writing it needs' : 'writing it needs';
  return new SinkError(
    `cannot write ${describe(config)}: ${why} ${missing.join(', ')} on ${resource}, which ${who} lacks; ` +
      `grant them, for instance with the custom role in docs/sinks/gcp-secret-manager.md`,
  );
}

/** `host:port` (an IPv6 host in brackets) as host and port. */
function splitEndpoint(endpoint: string): [string, number] {
  const colon = endpoint.lastIndexOf(':');
  return [endpoint.slice(0, colon), Number(endpoint.slice(colon + 1))];
}

/** `projects/123/secrets/s/versions/7` -> 7. */
function versionNumber(name: string | null | undefined): number {
  const number = Number(/\/versions\/(\d+)$/.exec(name ?? '')?.[1]);
  if (!Number.isSafeInteger(number)) throw new SinkError(`Secret Manager answered a version name that is not numbered: ${name}`);
  return number;
}

/** Bytes as gRPC gives them (a Buffer), or as base64 text should a transport give that. */
function bytes(data: Uint8Array | string | null | undefined): Buffer {
  if (data === null || data === undefined) return Buffer.alloc(0);
  return typeof data === 'string' ? Buffer.from(data, 'base64') : Buffer.from(data);
}

function sameEntries(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && b[key] === a[key]);
}

/** Why another tool's secret is not ours to write; undefined when it is ours or the policy says to take it over. */
function foreignReason(config: GcpSecretManagerSinkConfig, existing: ApiSecret): string | undefined {
  const by = existing.labels?.[MANAGED_BY_LABEL];
  if (by === MANAGED_BY || config.adopt) return undefined;
  return (
    `exists and is not managed by token-rotator` +
    `${by ? ` (label ${MANAGED_BY_LABEL}: ${by})` : ` (no ${MANAGED_BY_LABEL} label)`}; set adopt: true on the sink to take it over`
  );
}

function refuseForeign(config: GcpSecretManagerSinkConfig, existing: ApiSecret): void {
  const reason = foreignReason(config, existing);
  if (reason) throw new SinkError(`refusing to write ${describe(config)}: it ${reason}`);
}

/** Where the secret replicates cannot change; a sink that names locations must find them, or it would mislead. */
function refuseReplication(config: GcpSecretManagerSinkConfig, existing: ApiSecret): void {
  if (config.locations.length === 0) return;
  const replicas = existing.replication?.userManaged?.replicas?.map((replica) => replica.location ?? '') ?? [];
  const same = replicas.length === config.locations.length && config.locations.every((location) => replicas.includes(location));
  if (same) return;
  const has = existing.replication?.userManaged ? `replicates to ${replicas.join(', ')}` : 'replicates automatically';
  throw new SinkError(
    `refusing to write ${describe(config)}: it ${has}, and the sink says locations ${config.locations.join(', ')}; ` +
      `a secret's replication cannot change: make locations match it (or leave them out), or recreate the secret`,
  );
}

function annotationsFor(meta: TokenMeta, version: number): Record<string, string> {
  return { ...metadataValues(meta, ANNOTATIONS), [ANNOTATIONS.version]: String(version) };
}

/** The metadata of the latest version; none when the annotations describe another version (or none). */
function storedMeta(annotations: Record<string, string>, latestVersion: number): StoredTokenMeta {
  if (annotations[ANNOTATIONS.version] !== String(latestVersion)) return {};
  return storedMetadata(annotations, ANNOTATIONS);
}

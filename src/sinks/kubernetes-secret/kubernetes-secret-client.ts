import type { ISecret } from 'kubernetes-models/v1/Secret';

import { KubernetesError, SinkError } from '../../errors.js';
import { kubernetesClient } from '../../kubernetes/client.js';
import { MANAGED_BY, MANAGED_BY_LABEL } from '../../kubernetes/names.js';
import { rotatorObjectReason, TOKEN_NAME_ANNOTATION } from '../../kubernetes/rotator-objects.js';
import { Secret } from '../../secret.js';
import { parseFileContent, renderFile } from '../file/file-format.js';
import { refuseOtherToken } from '../ownership.js';
import type { SinkClient, SinkOpenContext, StoredTokenMeta, TokenMeta } from '../sink.js';
import { metadataValues, storedMetadata } from '../token-metadata.js';
import { describeKubernetesSecret, type KubernetesSecretSinkConfig } from './kubernetes-secret-config.js';
import { SecretListings } from './secret-listings.js';

/** Beside the secret, never in it: what drift repair and a lost state are recovered from. */
export const ANNOTATIONS = {
  tokenName: TOKEN_NAME_ANNOTATION,
  tokenId: 'token-rotator.io/token-id',
  expiresAt: 'token-rotator.io/expires-at',
  rotationId: 'token-rotator.io/rotation-id',
  rotatedAt: 'token-rotator.io/rotated-at',
} as const;

const secretsPath = (namespace: string) => `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets`;
const secretPath = (config: KubernetesSecretSinkConfig) => `${secretsPath(config.namespace)}/${encodeURIComponent(config.name)}`;
const describe = describeKubernetesSecret;

export function kubernetesSecretClient(context: SinkOpenContext): SinkClient<KubernetesSecretSinkConfig> {
  const api = () => kubernetesClient(context.env, context.logger);

  const listings = new SecretListings({
    async list(namespace, signal) {
      try {
        // Only ours: a namespace's other Secrets are none of the rotator's business, and the label
        // keeps the answer small. The client encodes the selector as a query parameter.
        return await (await api()).list<ISecret>(secretsPath(namespace), { labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}`, signal });
      } catch (error) {
        if (error instanceof KubernetesError && error.status === 403) return 'forbidden';
        throw error;
      }
    },
    onListFailed(namespace, error) {
      context.logger.warn({ namespace, err: error }, `cannot list Secrets in ${namespace}: reading each Secret there by name for a minute`);
    },
    onForbidden(namespace) {
      context.logger.info(
        { namespace },
        `cannot list Secrets in ${namespace} (403 Forbidden): reading each Secret there by name, and asking again every 15 minutes; granting list on secrets in ${namespace} saves a request per Secret at every check`,
      );
    },
  });

  /** By name, as a write, a preflight and a Secret no listing holds need it. */
  async function current(config: KubernetesSecretSinkConfig, signal: AbortSignal | undefined): Promise<ISecret | undefined> {
    const secret = await (await api()).get<ISecret>(secretPath(config), { signal });
    listings.readByName(config.namespace, config.name);
    return secret;
  }

  /** For a check: from the namespace's listing when it holds the Secret, else by name (missing, another tool's). */
  async function seen(config: KubernetesSecretSinkConfig, signal: AbortSignal | undefined): Promise<ISecret | undefined> {
    return (await listings.lookup(config.namespace, config.name, signal)) ?? current(config, signal);
  }

  return {
    async write(config, secret, meta, { signal }) {
      signal?.throwIfAborted();
      const content = render(config, secret, meta);
      // By name, never from a listing: whether it is ours, its type, whether it holds this already,
      // are decided on what the Secret is at the moment of writing.
      const existing = await guarded(config, 'read', () => current(config, signal));
      if (existing) {
        refuseForeign(config, existing);
        refuseOtherToken(config, storedMeta(existing.metadata?.annotations ?? {}).name, meta.name, describe(config));
        refuseRetype(config, existing);
        if (holdsAlready(existing, config, content, meta)) return 'unchanged';
      }
      signal?.throwIfAborted();
      // Forced: the Secret is ours (or adopted), and a `kubectl edit` of its key must not block the repair.
      await guarded(
        config,
        'write',
        async () => (await api()).patch<ISecret>(secretPath(config), applied(config, content, meta), 'apply', { force: true, signal }),
        existing,
      );
      // The read that verifies this delivery, and the next check, see the Secret as it is after it.
      listings.wrote(config.namespace, config.name);
      return existing ? 'updated' : 'created';
    },

    async read(config, { signal }) {
      signal?.throwIfAborted();
      const existing = await guarded(config, 'read', () => seen(config, signal));
      if (!existing) return undefined;
      const data = existing.data?.[config.key];
      const unowned = foreignReason(config, existing);
      const meta = unowned ? {} : storedMeta(existing.metadata?.annotations ?? {});
      if (!data) return { secret: undefined, meta, ...(unowned ? { unowned } : {}) };
      const parsed = parseFileContent(config.format, Buffer.from(data, 'base64').toString('utf8'), config.envKey);
      // The annotations speak for the whole Secret; a json key's own fields only fill what they lack.
      return { secret: parsed?.secret, meta: { ...parsed?.meta, ...meta }, ...(unowned ? { unowned } : {}) };
    },

    async preflight(config, { signal }) {
      signal?.throwIfAborted();
      const existing = await guarded(config, 'read', () => current(config, signal));
      if (existing) {
        refuseForeign(config, existing);
        refuseRetype(config, existing);
      }
      // A dry run (dryRun=All): the API server authorizes (create too, when the apply would create),
      // admits (the namespace must exist) and validates (an immutable Secret's data cannot change)
      // the very apply a rotation sends, and stores nothing. The placeholder differs from any value
      // the Secret holds, as a rotation's new secret does.
      const probe: TokenMeta = { name: 'preflight', id: 'preflight', expiresAt: null, rotationId: 'preflight', rotatedAt: new Date(0) };
      await guarded(
        config,
        'write',
        async () =>
          (await api()).patch(secretPath(config), applied(config, render(config, PREFLIGHT_VALUE, probe), probe), 'apply', {
            force: true,
            dryRun: true,
            signal,
          }),
        existing,
      );
    },

    async close() {
      listings.close();
    },
  };
}

/** What a dry-run apply carries in place of a secret: nothing is stored, and nothing secret is sent. */
const PREFLIGHT_VALUE = new Secret('token-rotator-preflight');

/** The exact bytes in the key: the file sink's formats, so an app reads them the same way. */
function render(config: KubernetesSecretSinkConfig, secret: Secret, meta: TokenMeta): string {
  try {
    return renderFile(config.format, secret, meta, config.envKey);
  } catch (error) {
    throw new SinkError(`cannot write ${describe(config)}: ${(error as Error).message}`, { cause: error });
  }
}

/** Why another tool's Secret is not ours to write; undefined when it is ours or the policy says to take it over. */
function foreignReason(config: KubernetesSecretSinkConfig, existing: ISecret): string | undefined {
  // The rotator's own state is nobody's sink, whatever the policy says: checked first, adopt or not.
  const own = rotatorObjectReason(existing.metadata);
  if (own) return own;
  if (existing.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY || config.adopt) return undefined;
  const by = existing.metadata?.labels?.[MANAGED_BY_LABEL];
  return (
    `exists and is not managed by token-rotator` +
    `${by ? ` (${MANAGED_BY_LABEL}: ${by})` : ` (no ${MANAGED_BY_LABEL} label)`}; set adopt: true on the sink to take it over`
  );
}

/** Another tool's Secret is left alone unless the policy says to take it over. */
function refuseForeign(config: KubernetesSecretSinkConfig, existing: ISecret): void {
  const reason = foreignReason(config, existing);
  if (reason) throw new SinkError(`refusing to write ${describe(config)}: it ${reason}`);
}

/** A Secret's type cannot change: said as what to do, before the API server answers it as an invalid field. */
function refuseRetype(config: KubernetesSecretSinkConfig, existing: ISecret): void {
  if (!existing.type || existing.type === config.secretType) return;
  throw new SinkError(
    `cannot write ${describe(config)}: it has type ${existing.type}, and a Secret's type cannot change; set secretType: ${existing.type} on the sink or remove the Secret`,
  );
}

/** The same secret from the same rotation, already there: a write would change nothing. */
function holdsAlready(existing: ISecret, config: KubernetesSecretSinkConfig, content: string, meta: TokenMeta): boolean {
  const annotations = existing.metadata?.annotations ?? {};
  const data = existing.data?.[config.key];
  return (
    existing.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY &&
    data !== undefined &&
    Buffer.from(data, 'base64').toString('utf8') === content &&
    annotations[ANNOTATIONS.rotationId] === meta.rotationId &&
    annotations[ANNOTATIONS.tokenId] === meta.id &&
    Object.entries(config.labels).every(([k, v]) => existing.metadata?.labels?.[k] === v) &&
    Object.entries(config.annotations).every(([k, v]) => annotations[k] === v)
  );
}

/** The fields token-rotator owns in the Secret, as a server-side apply configuration. */
function applied(config: KubernetesSecretSinkConfig, content: string, meta: TokenMeta): ISecret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: config.name,
      namespace: config.namespace,
      labels: { ...config.labels, [MANAGED_BY_LABEL]: MANAGED_BY },
      annotations: {
        ...config.annotations,
        ...metadataValues(meta, ANNOTATIONS),
      },
    },
    type: config.secretType,
    data: { [config.key]: Buffer.from(content, 'utf8').toString('base64') },
  };
}

const storedMeta = (annotations: Record<string, string>): StoredTokenMeta => storedMetadata(annotations, ANNOTATIONS);

/**
 * Kubernetes errors become sink errors naming the Secret and what could not be done with it; the
 * API error says why (unreachable, refused, invalid), and for an apply (`existing`: the Secret as
 * read before it) what to do about it. An abort stays an abort.
 */
async function guarded<T>(
  config: KubernetesSecretSinkConfig,
  doing: 'read' | 'write',
  call: () => Promise<T>,
  existing?: ISecret,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if ((error as Error)?.name === 'AbortError' || error instanceof SinkError) throw error;
    const advice = doing === 'write' && error instanceof KubernetesError ? applyAdvice(config, existing, error) : undefined;
    throw new SinkError(`cannot ${doing} ${describe(config)}: ${(error as Error).message}${advice ? `; ${advice}` : ''}`, {
      cause: error,
    });
  }
}

/** What to do when the API server refuses our apply, for the refusals whose cause the answer alone leaves unsaid. */
function applyAdvice(config: KubernetesSecretSinkConfig, existing: ISecret | undefined, error: KubernetesError): string | undefined {
  const { namespace, name } = config;
  // An apply creates a missing Secret: its own path cannot be missing, only the namespace.
  if (error.status === 404) return `the namespace ${namespace} does not exist: create it, or correct namespace on the sink`;
  // The API server authorizes an apply that creates as create too, of this Secret's name.
  if (error.status === 403 && !existing) {
    return `creating the Secret needs create on secrets in ${namespace}, besides get and patch (of this name: resourceNames [${name}], as token-rotator rbac prints it)`;
  }
  // `immutable` cannot be unset either: the only way to a new value is a new Secret.
  if (error.status === 422 && existing?.immutable === true) {
    return `it is immutable (immutable: true), so its data cannot change: delete it (kubectl delete secret -n ${namespace} ${name}) for token-rotator to create it anew`;
  }
  return undefined;
}

import { setTimeout as sleep } from 'node:timers/promises';
import { format } from 'node:util';

import { DefaultAzureCredential } from '@azure/identity';
import type { KeyVaultSecret } from '@azure/keyvault-secrets';
import { SecretClient } from '@azure/keyvault-secrets';
import { AzureLogger } from '@azure/logger';

import { SinkError } from '../../errors.js';
import { maskTokenLike } from '../../http/remote-text.js';
import type { Logger } from '../../log/logger.js';
import { Secret } from '../../secret.js';
import { refuseOtherToken } from '../ownership.js';
import type { SinkClient, SinkOpenContext, StoredTokenMeta, TokenMeta } from '../sink.js';
import { metadataValues, storedMetadata } from './../token-metadata.js';
import {
  type AzureKeyVaultSinkConfig,
  describeAzureKeyVaultSecret,
  MANAGED_BY,
  MANAGED_BY_TAG,
  MAX_TAG_VALUE,
  META_TAGS,
} from './azure-key-vault-config.js';
import { isRestError, type KeyVaultOperation, statusOf, translate } from './azure-key-vault-errors.js';

const describe = describeAzureKeyVaultSecret;

/**
 * The variables the Azure SDK's credential chain reads. It reads them from the process environment
 * only: one set in a dotenv file alone never reaches it, which is said once, by name.
 */
const AZURE_CREDENTIAL_VARIABLES = [
  'AZURE_TENANT_ID',
  'AZURE_CLIENT_ID',
  'AZURE_CLIENT_SECRET',
  'AZURE_CLIENT_CERTIFICATE_PATH',
  'AZURE_CLIENT_CERTIFICATE_PASSWORD',
  'AZURE_FEDERATED_TOKEN_FILE',
  'AZURE_AUTHORITY_HOST',
  'AZURE_ADDITIONALLY_ALLOWED_TENANTS',
  'AZURE_TOKEN_CREDENTIALS',
  'AZURE_LOG_LEVEL',
  'HTTPS_PROXY',
  'NO_PROXY',
];

export function azureKeyVaultClient(context: SinkOpenContext): SinkClient<AzureKeyVaultSinkConfig> {
  warnAboutUnreadVariables(context);
  const restoreLogger = routeSdkLog(context.logger);
  // One credential for the run: its token cache serves every vault (the tenant comes with each challenge).
  const credential = new DefaultAzureCredential();
  const clients = new Map<string, SecretClient>();
  const clientFor = (config: AzureKeyVaultSinkConfig): SecretClient => {
    let client = clients.get(config.vaultUrl);
    if (!client) {
      // The SDK's own retries are off: it would send a PUT again after a lost answer, and Key Vault
      // would add a second version. `attempt` retries instead, and reads back before resending.
      client = new SecretClient(config.vaultUrl, credential, { retryOptions: { maxRetries: 0 } });
      clients.set(config.vaultUrl, client);
    }
    return client;
  };

  /**
   * `run`, tried again on what is worth trying again (no answer, 408, 429, 5xx), as the SDK would,
   * after Retry-After or a growing delay. When the failure may have come after Key Vault acted (no
   * answer, 408, 5xx), `landed` is asked first: a write that did land is not sent again.
   */
  async function attempt<T>(
    config: AzureKeyVaultSinkConfig,
    operation: KeyVaultOperation,
    signal: AbortSignal | undefined,
    run: () => Promise<T>,
    landed?: () => Promise<T | undefined>,
  ): Promise<T> {
    for (let n = 1; ; n++) {
      try {
        return await run();
      } catch (error) {
        if (!isRetryable(error)) throw translate(config, operation, error);
        if (landed && mayHaveActed(error)) {
          const done = await landed().catch(() => undefined);
          if (done !== undefined) return done;
        }
        if (n >= ATTEMPTS) throw translate(config, operation, error);
        await sleep(retryDelay(error, n), undefined, { signal });
      }
    }
  }

  /** The latest version, with its value; undefined when there is none (or it is deleted, which reads the same). */
  async function latest(config: AzureKeyVaultSinkConfig, signal: AbortSignal | undefined): Promise<KeyVaultSecret | undefined> {
    return attempt(config, 'get', signal, () =>
      clientFor(config)
        .getSecret(config.name, { abortSignal: signal })
        .catch((error: unknown) => {
          if (statusOf(error) === 404) return undefined;
          throw error;
        }),
    );
  }

  return {
    async write(config, secret, meta, { signal }) {
      signal?.throwIfAborted();
      const tags = versionTags(config, meta);
      const existing = await latest(config, signal);
      if (existing) {
        refuseForeign(config, existing);
        refuseOtherToken(config, storedMeta(existing.properties.tags ?? {}).name, meta.name, describe(config));
        if (sameRotation(existing, secret, meta)) {
          if (propertiesMatch(config, existing, tags, meta)) return 'unchanged';
          // The same secret of the same rotation is there (a retry after a crash, or a policy that
          // changed its tags): its tags and expiry are brought up to date on that version, no new one.
          signal?.throwIfAborted();
          // Setting the same properties twice is harmless: no read-back needed.
          await attempt(config, 'update', signal, () =>
            clientFor(config).updateSecretProperties(config.name, existing.properties.version ?? '', {
              tags: { ...existing.properties.tags, ...tags },
              ...(config.contentType !== undefined ? { contentType: config.contentType } : {}),
              ...expiry(meta),
              abortSignal: signal,
            }),
          );
          return 'updated';
        }
      }
      signal?.throwIfAborted();
      await attempt(
        config,
        'set',
        signal,
        () =>
          clientFor(config).setSecret(config.name, secret.reveal(), {
            tags,
            ...(config.contentType !== undefined ? { contentType: config.contentType } : {}),
            ...expiry(meta),
            enabled: true,
            abortSignal: signal,
          }),
        // Each PUT adds a version: before sending it again, whether the last one landed is read back.
        async () => {
          const now = await clientFor(config).getSecret(config.name, { abortSignal: signal });
          return sameRotation(now, secret, meta) ? now : undefined;
        },
      );
      return existing ? 'updated' : 'created';
    },

    async read(config, { signal }) {
      signal?.throwIfAborted();
      const existing = await latest(config, signal);
      if (!existing) return undefined;
      const tags = existing.properties.tags ?? {};
      const unowned = foreignReason(config, tags);
      const meta = unowned ? {} : storedMeta(tags);
      const secret = existing.value ? new Secret(existing.value) : undefined;
      return { secret, meta, ...(unowned ? { unowned } : {}) };
    },

    /**
     * Key Vault has no dry run: this checks that a token is issued for the vault, that the vault
     * answers, that the identity may read the secret, that an existing secret is ours (or adopted),
     * and that no deleted secret holds the name. Whether it may add a version (setSecret) is only
     * known by adding one, and is said in the log.
     */
    async preflight(config, { signal }) {
      signal?.throwIfAborted();
      const existing = await latest(config, signal);
      if (existing) {
        refuseForeign(config, existing);
      } else {
        const deleted = await attempt(config, 'getDeleted', signal, () =>
          clientFor(config)
            .getDeletedSecret(config.name, { abortSignal: signal })
            .then(
              () => true,
              (error: unknown) => {
                if (statusOf(error) === 404) return false;
                // A vault without soft-delete, or no permission to see deleted secrets: not checked.
                if (statusOf(error) === 403 || statusOf(error) === 400) return undefined;
                throw error;
              },
            ),
        );
        if (deleted) {
          throw translate(config, 'set', {
            name: 'RestError',
            message: 'the secret is deleted but recoverable',
            statusCode: 409,
            details: { error: { code: 'Conflict', innerError: { code: 'ObjectIsDeletedButRecoverable' } } },
          });
        }
        if (deleted === undefined) {
          context.logger.info({ sink: describe(config) }, 'could not check whether a deleted secret holds the name (no permission)');
        }
      }
      context.logger.info(
        { sink: describe(config) },
        `checked: a token for the vault, the vault reachable, permission to read the secret${existing ? ', the secret ours' : ', no secret yet (it will be created)'}; ` +
          'not checked: permission to add a version (Key Vault has no dry run; it needs setSecret, in the role "Key Vault Secrets Officer", or the access-policy permission set)',
      );
    },

    async close() {
      clients.clear();
      restoreLogger();
    },
  };
}

/** Tries of one call, as many as the SDK's own retry policy makes (the first and three more). */
const ATTEMPTS = 4;

/** The network failures the SDK's retry policy retries; a certificate Node does not trust is not one of them. */
const TRANSIENT_NETWORK_ERRORS = new Set(['ETIMEDOUT', 'ESOCKETTIMEDOUT', 'ECONNREFUSED', 'ECONNRESET', 'ENOENT', 'ENOTFOUND']);

/** What the SDK's default retry policy retries: a transient network failure, 408, 429, 5xx but 501 and 505. */
function isRetryable(error: unknown): boolean {
  if (!isRestError(error)) return false;
  const status = error.statusCode;
  if (status === undefined) return TRANSIENT_NETWORK_ERRORS.has(error.code ?? '');
  return status === 408 || status === 429 || (status >= 500 && status !== 501 && status !== 505);
}

/** A failure after which Key Vault may have done what was asked: no answer, a timeout, a server error. 429 is a refusal. */
function mayHaveActed(error: unknown): boolean {
  const status = statusOf(error);
  return status === undefined || status === 408 || status >= 500;
}

/** Retry-After when Key Vault says it (at most 30 s), else 0.5 s, 1 s, 2 s… with jitter. */
function retryDelay(error: unknown, attemptNumber: number): number {
  const header = (error as { response?: { headers?: { get(name: string): string | undefined } } }).response?.headers?.get('retry-after');
  const seconds = header !== undefined ? Number(header) : Number.NaN;
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds, 30) * 1000;
  return 500 * 2 ** (attemptNumber - 1) * (0.8 + Math.random() * 0.4);
}

/** Every tag a new version carries: the policy's, the marker, and the token's metadata (never the secret). */
function versionTags(config: AzureKeyVaultSinkConfig, meta: TokenMeta): Record<string, string> {
  const tags: Record<string, string> = {
    ...config.tags,
    [MANAGED_BY_TAG]: MANAGED_BY,
    ...metadataValues(meta, META_TAGS),
  };
  for (const [key, value] of Object.entries(tags)) {
    if (value.length > MAX_TAG_VALUE) {
      throw new SinkError(`cannot write ${describe(config)}: the tag ${key} would be longer than Key Vault's ${MAX_TAG_VALUE} characters`);
    }
  }
  return tags;
}

/** Why another writer's secret is not ours to write; undefined when it is ours or the policy says to take it over. */
function foreignReason(config: AzureKeyVaultSinkConfig, tags: Record<string, string>): string | undefined {
  const by = tags[MANAGED_BY_TAG];
  if (by === MANAGED_BY || config.adopt) return undefined;
  return (
    `exists and is not managed by token-rotator` +
    `${by ? ` (its latest version is tagged ${MANAGED_BY_TAG}: ${by})` : ` (no ${MANAGED_BY_TAG} tag on its latest version)`}; ` +
    'set adopt: true on the sink to take it over'
  );
}

function refuseForeign(config: AzureKeyVaultSinkConfig, existing: KeyVaultSecret): void {
  const reason = foreignReason(config, existing.properties.tags ?? {});
  if (reason) throw new SinkError(`refusing to write ${describe(config)}: it ${reason}`);
}

/** The latest version is this rotation's secret, written by us: adding another would be a duplicate. */
function sameRotation(existing: KeyVaultSecret, secret: Secret, meta: TokenMeta): boolean {
  const tags = existing.properties.tags ?? {};
  return (
    tags[MANAGED_BY_TAG] === MANAGED_BY &&
    tags[META_TAGS.rotationId] === meta.rotationId &&
    tags[META_TAGS.tokenId] === meta.id &&
    existing.value === secret.reveal()
  );
}

/** Its tags, content type and expiry are what this write would give it (other tags may be there too). */
function propertiesMatch(
  config: AzureKeyVaultSinkConfig,
  existing: KeyVaultSecret,
  tags: Record<string, string>,
  meta: TokenMeta,
): boolean {
  const have = existing.properties.tags ?? {};
  const expires = existing.properties.expiresOn?.getTime();
  // Key Vault keeps whole seconds.
  const expiresOn = expiry(meta).expiresOn;
  const wanted = expiresOn ? Math.floor(expiresOn.getTime() / 1000) * 1000 : undefined;
  return (
    Object.entries(tags).every(([key, value]) => have[key] === value) &&
    (config.contentType === undefined || existing.properties.contentType === config.contentType) &&
    (wanted === undefined || expires === wanted)
  );
}

/**
 * The version's expiresOn: the token's expiry. The SDK sends it as a 32-bit count of seconds, so an
 * expiry after January 2038 is left out (the expires-at tag still says it) rather than sent wrong.
 */
function expiry(meta: TokenMeta): { expiresOn?: Date } {
  if (!meta.expiresAt || meta.expiresAt.getTime() / 1000 >= 2 ** 31) return {};
  return { expiresOn: meta.expiresAt };
}

const storedMeta = (tags: Record<string, string>): StoredTokenMeta => storedMetadata(tags, META_TAGS);

/**
 * The Azure SDK logs nothing unless AZURE_LOG_LEVEL (or DEBUG=azure*) is set, and then writes to
 * stderr around our logger. Its lines hold no bodies (headers and query values are redacted by the
 * SDK's own sanitizer), but they go through our logger anyway: scrubbed of every known secret, and
 * anything token-shaped masked.
 */
function routeSdkLog(logger: Logger): () => void {
  const previous = AzureLogger.log;
  const ours = (...args: unknown[]) => {
    logger.info({ azureSdk: true }, maskTokenLike(format(...args)).trim());
  };
  AzureLogger.log = ours;
  return () => {
    if (AzureLogger.log === ours) AzureLogger.log = previous;
  };
}

/** A variable the run's environment has (from a dotenv file) that the process's does not: the SDK will not see it. */
function warnAboutUnreadVariables(context: SinkOpenContext): void {
  const unread = AZURE_CREDENTIAL_VARIABLES.filter((name) => context.env[name] !== undefined && process.env[name] !== context.env[name]);
  if (unread.length > 0) {
    context.logger.warn(
      { variables: unread },
      `the Azure SDK reads ${unread.join(', ')} from the process environment only, and there ${unread.length === 1 ? 'it is' : 'they are'} not set (or set otherwise): export ${unread.length === 1 ? 'it' : 'them'} rather than putting ${unread.length === 1 ? 'it' : 'them'} in a dotenv file`,
    );
  }
}

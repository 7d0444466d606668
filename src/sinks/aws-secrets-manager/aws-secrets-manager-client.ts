import {
  CreateSecretCommand,
  DescribeSecretCommand,
  type DescribeSecretCommandOutput,
  GetSecretValueCommand,
  PutSecretValueCommand,
  SecretsManagerClient,
  TagResourceCommand,
} from '@aws-sdk/client-secrets-manager';

import { isLoopbackHost } from '../../common/loopback.js';
import { SinkError } from '../../errors.js';
import { remoteText } from '../../http/remote-text.js';
import { Secret } from '../../secret.js';
import { refuseOtherToken } from '../ownership.js';
import type { SinkClient, SinkContent, SinkOpenContext, TokenMeta } from '../sink.js';
import { awsFailure, INSECURE_ENDPOINT, sinkErrorFrom } from './aws-errors.js';
import { type AwsSecretsManagerSinkConfig, describeAwsSecret, isSecretArn } from './aws-secrets-manager-config.js';
import { readJsonObject, stringField, withField } from './json-field.js';
import {
  desiredTags,
  isMarked,
  isVersionOf,
  MANAGED_BY_TAG,
  storedMeta,
  type Tag,
  taggedRotationId,
  tagMap,
  VERSIONS_PER_ROTATION,
  versionToken,
} from './secret-tags.js';

const describe = describeAwsSecret;
const CURRENT = 'AWSCURRENT';

/**
 * The SDK never logs: its own logger would print whatever its middleware hands it. An object of our
 * own rather than the SDK's NoOpLogger, because some credential providers fall back to
 * console.warn when they see that one.
 */
const SILENT_LOGGER = { trace() {}, debug() {}, info() {}, warn() {}, error() {} };

type Described = DescribeSecretCommandOutput;

/** The value under AWSCURRENT, as far as a sink needs it. */
interface CurrentVersion {
  versionId: string | undefined;
  /** SecretString; undefined when the version holds SecretBinary. */
  text: string | undefined;
}

export function awsSecretsManagerClient(context: SinkOpenContext): SinkClient<AwsSecretsManagerSinkConfig> {
  warnAboutUnseenVariables(context);
  /** One SDK client per region a sink names ('' for the SDK's own choice), each with its credential cache. */
  const clients = new Map<string, SecretsManagerClient>();

  function sdk(config: AwsSecretsManagerSinkConfig): SecretsManagerClient {
    const region = config.region ?? '';
    let client = clients.get(region);
    if (!client) {
      // Region, endpoint (AWS_ENDPOINT_URL_SECRETS_MANAGER, AWS_ENDPOINT_URL, the profile's
      // endpoint_url) and credentials all come from the SDK's own chains; only the region a sink
      // names is passed.
      client = new SecretsManagerClient({
        ...(config.region ? { region: config.region } : {}),
        logger: SILENT_LOGGER,
        // A request that hangs fails (the handler would only warn, on the console, by default).
        requestHandler: { connectionTimeout: 10_000, requestTimeout: 60_000, throwOnRequestTimeout: true, logger: SILENT_LOGGER },
      });
      client.middlewareStack.add(refuseCleartext, { step: 'build', name: 'tokenRotatorRefuseCleartext' });
      clients.set(region, client);
    }
    return client;
  }

  /** Runs one API call; an abort stays an abort, and any other failure comes back rebuilt by `onError`. */
  async function send<T>(
    config: AwsSecretsManagerSinkConfig,
    signal: AbortSignal | undefined,
    call: (client: SecretsManagerClient, options: { abortSignal?: AbortSignal }) => Promise<T>,
    onError: (error: unknown) => T | Error,
  ): Promise<T> {
    signal?.throwIfAborted();
    try {
      return await call(sdk(config), signal ? { abortSignal: signal } : {});
    } catch (error) {
      if (signal?.aborted) signal.throwIfAborted();
      if ((error as Error)?.name === 'AbortError') throw new DOMException('The operation was aborted', 'AbortError');
      const answer = onError(error);
      if (answer instanceof Error) throw answer;
      return answer;
    }
  }

  const failed = (config: AwsSecretsManagerSinkConfig, what: string, action: string, resource: string) => (error: unknown) =>
    sinkErrorFrom(error, what, action, resource, config.kmsKeyId);

  /** The secret's details (tags, versions, deletion); undefined when there is no such secret. */
  function describeSecret(
    config: AwsSecretsManagerSinkConfig,
    what: string,
    signal: AbortSignal | undefined,
  ): Promise<Described | undefined> {
    return send(
      config,
      signal,
      (client, options) => client.send(new DescribeSecretCommand({ SecretId: config.secretId }), options),
      (error) =>
        awsFailure(error).name === 'ResourceNotFoundException' ? undefined : failed(config, what, 'DescribeSecret', config.secretId)(error),
    );
  }

  /** What AWSCURRENT holds; undefined when the secret has no current version. */
  async function currentVersion(
    config: AwsSecretsManagerSinkConfig,
    existing: Described,
    what: string,
    signal: AbortSignal | undefined,
  ): Promise<CurrentVersion | undefined> {
    const hasCurrent = Object.values(existing.VersionIdsToStages ?? {}).some((stages) => stages.includes(CURRENT));
    if (!hasCurrent) return undefined;
    const arn = existing.ARN ?? config.secretId;
    const got = await send(
      config,
      signal,
      (client, options) => client.send(new GetSecretValueCommand({ SecretId: arn, VersionStage: CURRENT }), options),
      // Gone since it was described: as if it had no value.
      (error) => (awsFailure(error).name === 'ResourceNotFoundException' ? undefined : failed(config, what, 'GetSecretValue', arn)(error)),
    );
    return got && { versionId: got.VersionId, text: got.SecretString };
  }

  async function create(
    config: AwsSecretsManagerSinkConfig,
    value: string,
    meta: TokenMeta,
    tags: Tag[],
    what: string,
    signal: AbortSignal | undefined,
  ): Promise<'created' | 'exists'> {
    if (isSecretArn(config.secretId)) {
      throw new SinkError(
        `${what}: no such secret, and a secret named by its ARN cannot be created; give its name as secretId to have token-rotator create it`,
      );
    }
    return send<'created' | 'exists'>(
      config,
      signal,
      async (client, options) => {
        await client.send(
          new CreateSecretCommand({
            Name: config.secretId,
            SecretString: value,
            ClientRequestToken: versionToken(meta.rotationId, 0),
            Description: `API token ${meta.name}, rotated by token-rotator`,
            Tags: tags,
            ...(config.kmsKeyId ? { KmsKeyId: config.kmsKeyId } : {}),
          }),
          options,
        );
        return 'created';
      },
      (error) => {
        // Created by someone else since it was described: written as an existing secret.
        if (awsFailure(error).name === 'ResourceExistsException') return 'exists';
        return failed(config, what, 'CreateSecret', config.secretId)(error);
      },
    );
  }

  /**
   * Adds a version holding `value` and makes it AWSCURRENT, idempotently: its ClientRequestToken
   * comes from the rotation, so a retry after a crash gets the version the first try made. The
   * same rotation writing another value (or writing again a value replaced since) moves on to the
   * rotation's next token.
   */
  async function putVersion(
    config: AwsSecretsManagerSinkConfig,
    existing: Described,
    meta: TokenMeta,
    value: string,
    what: string,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const arn = existing.ARN ?? config.secretId;
    const labelled = existing.VersionIdsToStages ?? {};
    for (let attempt = 0; attempt < VERSIONS_PER_ROTATION; attempt++) {
      const token = versionToken(meta.rotationId, attempt);
      const stages = labelled[token];
      // There, and no longer current: sending it again would not make it current.
      if (stages && !stages.includes(CURRENT)) continue;
      const stagesNow = await send(
        config,
        signal,
        async (client, options) =>
          (await client.send(new PutSecretValueCommand({ SecretId: arn, ClientRequestToken: token, SecretString: value }), options))
            .VersionStages ?? [],
        // A version of this token holds another value: the rotation's next token.
        (error) => (awsFailure(error).name === 'ResourceExistsException' ? undefined : failed(config, what, 'PutSecretValue', arn)(error)),
      );
      if (stagesNow?.includes(CURRENT)) return;
    }
    throw new SinkError(
      `${what}: rotation ${meta.rotationId} has already written ${VERSIONS_PER_ROTATION} versions of it that no longer hold this value; ` +
        'something else keeps changing the secret: find it, then run again',
    );
  }

  async function tag(config: AwsSecretsManagerSinkConfig, arn: string, tags: Tag[], what: string, signal: AbortSignal | undefined) {
    await send<unknown>(
      config,
      signal,
      (client, options) => client.send(new TagResourceCommand({ SecretId: arn, Tags: tags }), options),
      failed(config, what, 'TagResource', arn),
    );
  }

  async function update(
    config: AwsSecretsManagerSinkConfig,
    existing: Described,
    secret: Secret,
    meta: TokenMeta,
    tags: Tag[],
    what: string,
    signal: AbortSignal | undefined,
  ): Promise<'updated' | 'unchanged'> {
    refuseDeleted(existing, what);
    const present = tagMap(existing.Tags);
    const reason = foreignReason(config, present);
    if (reason) throw new SinkError(`refusing to write ${describe(config)}: it ${reason}`);
    refuseOtherToken(config, storedMeta(present).name, meta.name, describe(config));
    const current = await currentVersion(config, existing, what, signal);
    const value = valueToWrite(config, secret, current, what);
    // Already there from this rotation: a retry after a crash, or a run with nothing to do.
    const written =
      current !== undefined && secretIn(config, current) === secret.reveal() && isVersionOf(current.versionId, meta.rotationId);
    const tagged = tags.every(({ Key, Value }) => present[Key] === Value);
    if (written && tagged) return 'unchanged';
    const arn = existing.ARN ?? config.secretId;
    if (!written) await putVersion(config, existing, meta, value, what, signal);
    // After the value, never before: tags that name a rotation describe a version it wrote.
    await tag(config, arn, tags, what, signal);
    return 'updated';
  }

  return {
    async write(config, secret, meta, { signal }) {
      signal?.throwIfAborted();
      const what = `cannot write ${describe(config)}`;
      const tags = tagsFor(config, meta, what);
      for (let round = 0; round < 2; round++) {
        const existing = await describeSecret(config, what, signal);
        if (existing) return update(config, existing, secret, meta, tags, what, signal);
        if ((await create(config, valueToWrite(config, secret, undefined, what), meta, tags, what, signal)) === 'created') return 'created';
      }
      throw new SinkError(`${what}: it was created and removed again while token-rotator wrote it; run again`);
    },

    async read(config, { signal }): Promise<SinkContent | undefined> {
      signal?.throwIfAborted();
      const what = `cannot read ${describe(config)}`;
      const existing = await describeSecret(config, what, signal);
      if (!existing) return undefined;
      refuseDeleted(existing, what);
      const tags = tagMap(existing.Tags);
      const unowned = foreignReason(config, tags);
      const current = await currentVersion(config, existing, what, signal);
      const value = current && secretIn(config, current);
      // The tags speak for the version the rotation they name wrote, and for no other: a value put
      // there since (by hand, or a crash between the value and its tags) has no metadata of ours.
      const meta = !unowned && isVersionOf(current?.versionId, taggedRotationId(tags)) ? storedMeta(tags) : {};
      return { secret: value === undefined ? undefined : new Secret(value), meta, ...(unowned ? { unowned } : {}) };
    },

    async preflight(config, { signal }) {
      signal?.throwIfAborted();
      const what = `cannot write ${describe(config)}`;
      const existing = await describeSecret(config, what, signal);
      if (!existing) {
        if (isSecretArn(config.secretId)) {
          throw new SinkError(`${what}: no such secret, and a secret named by its ARN cannot be created; give its name as secretId`);
        }
        context.logger.info(
          { sink: describe(config) },
          'the secret does not exist yet: the first rotation creates it, which needs secretsmanager:CreateSecret and secretsmanager:TagResource',
        );
        return;
      }
      refuseDeleted(existing, what);
      const reason = foreignReason(config, tagMap(existing.Tags));
      if (reason) throw new SinkError(`refusing to write ${describe(config)}: it ${reason}`);
      // Reading is part of every write (and tells a missing kms:Decrypt); PutSecretValue and
      // TagResource cannot be tried without writing.
      const current = await currentVersion(config, existing, what, signal);
      if (config.key !== undefined) fieldsBeside(config, config.key, current, what);
    },

    async identify(config, { signal }) {
      // A name or a partial ARN, resolved by AWS to the one full ARN of the secret it names.
      return (await describeSecret(config, `cannot describe ${describe(config)}`, signal))?.ARN;
    },

    async close() {
      for (const client of clients.values()) client.destroy();
      clients.clear();
    },
  };
}

/** The tags of a write, or a SinkError naming the destination when the metadata cannot be tags. */
function tagsFor(config: AwsSecretsManagerSinkConfig, meta: TokenMeta, what: string): Tag[] {
  try {
    return desiredTags(config.tags, meta);
  } catch (error) {
    throw new SinkError(`${what}: ${(error as Error).message}`);
  }
}

/** What the current version holds as the secret: the whole string, or the key's field of a JSON object. */
function secretIn(config: AwsSecretsManagerSinkConfig, current: CurrentVersion): string | undefined {
  if (current.text === undefined || current.text === '') return undefined;
  if (config.key === undefined) return current.text;
  const reading = readJsonObject(current.text);
  return reading.kind === 'object' ? stringField(reading.fields, config.key) : undefined;
}

/** The value of the new version: the secret, or the current JSON object with the secret in its key. */
function valueToWrite(config: AwsSecretsManagerSinkConfig, secret: Secret, current: CurrentVersion | undefined, what: string): string {
  if (config.key === undefined) return secret.reveal();
  return withField(fieldsBeside(config, config.key, current, what), config.key, secret.reveal());
}

/**
 * The fields the secret's key goes in beside: the current JSON object's, every one kept. A current
 * value that is not a JSON object is replaced only with `adopt`, since it would be lost from
 * AWSCURRENT (it stays as AWSPREVIOUS).
 */
function fieldsBeside(
  config: AwsSecretsManagerSinkConfig,
  key: string,
  current: CurrentVersion | undefined,
  what: string,
): Record<string, unknown> {
  if (current === undefined) return {};
  const reading = current.text === undefined ? undefined : readJsonObject(current.text);
  if (reading?.kind === 'object') return reading.fields;
  if (config.adopt) return {};
  const held = current.text === undefined ? 'a binary value' : 'a value that is not a JSON object';
  throw new SinkError(
    `${what}: it holds ${held}, so key ${JSON.stringify(key)} cannot be set in it; remove key from the sink to store ` +
      `the token as the whole value, or set adopt: true to replace the value with {${JSON.stringify(key)}: …} (the old value stays as version AWSPREVIOUS)`,
  );
}

/** Why another writer's secret is not ours to write; undefined when it is ours or the policy says to take it over. */
function foreignReason(config: AwsSecretsManagerSinkConfig, tags: Record<string, string>): string | undefined {
  if (isMarked(tags) || config.adopt) return undefined;
  const by = tags[MANAGED_BY_TAG];
  return (
    `exists and is not managed by token-rotator` +
    `${by ? ` (${MANAGED_BY_TAG}: ${remoteText(by, 64)})` : ` (no ${MANAGED_BY_TAG} tag)`}; set adopt: true on the sink to take it over`
  );
}

/** A secret scheduled for deletion can be neither read nor written until it is restored. */
function refuseDeleted(existing: Described, what: string): void {
  if (!existing.DeletedDate) return;
  const arn = existing.ARN ?? existing.Name ?? '';
  throw new SinkError(
    `${what}: the secret is scheduled for deletion (deleted ${existing.DeletedDate.toISOString()}); ` +
      `restore it (aws secretsmanager restore-secret --secret-id ${arn}) or point the sink at another secret`,
  );
}

/**
 * The secret would travel in clear over plain http: only loopback may be spoken to that way (a
 * private endpoint is https, as AWS's are). Checked on the request itself, since the endpoint may
 * come from the environment or the AWS profile.
 */
const refuseCleartext =
  <I extends object, O extends object>(next: (args: { input: I; request: unknown }) => Promise<O>) =>
  async (args: { input: I; request: unknown }): Promise<O> => {
    const request = args.request as { protocol?: string; hostname?: string } | undefined;
    if (
      request?.protocol === 'http:' &&
      request.hostname &&
      !isLoopbackHost(request.hostname.includes(':') ? `[${request.hostname}]` : request.hostname)
    ) {
      const error = new Error(`refusing to send a secret over plain http to ${request.hostname}: use an https:// endpoint`);
      error.name = INSECURE_ENDPOINT;
      throw error;
    }
    return next(args);
  };

/**
 * The AWS SDK reads its variables from the process environment only; a dotenv file's AWS_* values
 * would be silently ignored. Said once, by name.
 */
function warnAboutUnseenVariables(context: SinkOpenContext): void {
  const unseen = Object.keys(context.env)
    .filter((name) => name.startsWith('AWS_') && context.env[name] !== undefined && process.env[name] !== context.env[name])
    .sort();
  if (unseen.length > 0) {
    context.logger.warn(
      { variables: unseen },
      'the AWS SDK reads the process environment only, not the dotenv file: these AWS variables are not used; export them instead',
    );
  }
}

import { randomBytes, randomUUID } from 'node:crypto';

import type { Clock } from '../../../src/clock.js';
import { AwsError, invalidParameter, markedForDeletion, notFound, validation } from './aws-error.js';

export const CURRENT = 'AWSCURRENT';
export const PREVIOUS = 'AWSPREVIOUS';
const DAY_MS = 24 * 60 * 60 * 1000;

export interface StoredVersion {
  id: string;
  text?: string;
  binary?: Buffer;
  stages: string[];
  created: Date;
}

export interface StoredSecret {
  name: string;
  arn: string;
  description?: string;
  kmsKeyId?: string;
  /** In the order they were first set, as AWS lists them. */
  tags: Map<string, string>;
  /** In the order they were created. */
  versions: Map<string, StoredVersion>;
  created: Date;
  lastChanged: Date;
  lastAccessed?: Date;
  deleted?: Date;
}

/** An IAM-like deny: `secretsmanager:PutSecretValue` (or `*`) on a secret (name, ARN or `*`). */
export interface DenyRule {
  action: string;
  resource: string;
}

type Json = Record<string, unknown>;

const SECRET_NAME = /^[A-Za-z0-9/_+=.@-]+$/;
const TAG_TEXT = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$/u;
const MAX_TAGS = 50;
const MAX_VALUE_BYTES = 65_536;
const SUFFIX_ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

const seconds = (date: Date) => date.getTime() / 1000;

function randomSuffix(): string {
  return [...randomBytes(6)].map((b) => SUFFIX_ALPHABET[b % SUFFIX_ALPHABET.length]).join('');
}

/**
 * The secrets of one account in one region, with Secrets Manager's rules for the calls token-rotator
 * and its tests make (API reference 2017-10-17): secrets by name, full ARN or partial ARN; versions
 * whose ClientRequestToken is their VersionId (the same token with the same value is a no-op, with
 * another value a ResourceExistsException); staging labels AWSCURRENT and AWSPREVIOUS moved as
 * PutSecretValue moves them; deprecated versions (no label) removed past 100 once a day old, and a
 * LimitExceededException when a secret would hold more than 100 that cannot be removed yet;
 * deletion with a recovery window (the secret can be described, restored, nothing else), tags.
 */
export class SecretStore {
  readonly secrets = new Map<string, StoredSecret>();
  readonly denies: DenyRule[] = [];
  /** KMS keys Secrets Manager may not use: writes fail with EncryptionFailure, reads with DecryptionFailure. */
  readonly deniedKmsKeys = new Set<string>();

  constructor(
    readonly region: string,
    readonly account: string,
    readonly clock: Clock,
    readonly maxVersions = 100,
  ) {}

  arnFor(name: string): string {
    return `arn:aws:secretsmanager:${this.region}:${this.account}:secret:${name}-${randomSuffix()}`;
  }

  /** A secret by name, full ARN, or partial ARN (the ARN without its random suffix). */
  find(secretId: string): StoredSecret | undefined {
    if (!secretId.startsWith('arn:')) return this.secrets.get(secretId);
    for (const secret of this.secrets.values()) {
      if (secret.arn === secretId || secret.arn.slice(0, -7) === secretId) return secret;
    }
    return undefined;
  }

  /** The ARN AWS names in an AccessDenied for this id: the secret's own when it exists. */
  resourceOf(secretId: string): string {
    return this.find(secretId)?.arn ?? secretId;
  }

  authorize(principal: string, action: string, resource: string): void {
    const secret = this.find(resource);
    const denied = this.denies.some(
      (rule) =>
        (rule.action === '*' || rule.action === action) &&
        (rule.resource === '*' ||
          rule.resource === resource ||
          (secret !== undefined && (rule.resource === secret.name || rule.resource === secret.arn))),
    );
    if (denied) {
      throw new AwsError(
        'AccessDeniedException',
        `User: ${principal} is not authorized to perform: ${action} on resource: ${secret?.arn ?? resource} because no identity-based policy allows the ${action} action`,
      );
    }
  }

  // ---- the API ----

  createSecret(input: Json, principal: string): Json {
    const name = requiredString(input, 'Name', 512);
    if (!SECRET_NAME.test(name)) {
      throw invalidParameter('Invalid name. Must be a valid name containing alphanumeric characters, or any of the following: -/_+=.@!');
    }
    const token = optionalToken(input);
    const value = secretValue(input);
    const tags = tagList(input.Tags);
    this.authorize(principal, 'secretsmanager:CreateSecret', name);
    if (tags.length > 0) this.authorize(principal, 'secretsmanager:TagResource', name);
    if (input.AddReplicaRegions !== undefined) throw invalidParameter('This double does not replicate secrets.');
    const kmsKeyId = optionalString(input, 'KmsKeyId', 2048);

    const existing = this.secrets.get(name);
    if (existing?.deleted) {
      throw new AwsError(
        'InvalidRequestException',
        "You can't create this secret because a secret with this name is already scheduled for deletion.",
      );
    }
    if (existing) {
      // The same request again (same token, same value): answered as the first one was.
      const version = token ? existing.versions.get(token) : undefined;
      if (version && value && sameValue(version, value)) return { ARN: existing.arn, Name: existing.name, VersionId: version.id };
      throw new AwsError('ResourceExistsException', `The operation failed because the secret ${name} already exists.`);
    }
    if (value) this.useKey(kmsKeyId, 'encrypt');
    const now = this.clock.now();
    const secret: StoredSecret = {
      name,
      arn: this.arnFor(name),
      ...(typeof input.Description === 'string' ? { description: input.Description } : {}),
      ...(kmsKeyId ? { kmsKeyId } : {}),
      tags: new Map(),
      versions: new Map(),
      created: now,
      lastChanged: now,
    };
    setTags(secret, tags);
    let versionId: string | undefined;
    if (value) versionId = this.addVersion(secret, token ?? randomUUID(), value, undefined).id;
    this.secrets.set(name, secret);
    return { ARN: secret.arn, Name: secret.name, ...(versionId ? { VersionId: versionId } : {}) };
  }

  describeSecret(input: Json, principal: string): Json {
    const secretId = requiredString(input, 'SecretId', 2048);
    this.authorize(principal, 'secretsmanager:DescribeSecret', secretId);
    const secret = this.find(secretId);
    if (!secret) throw notFound();
    const versionIdsToStages: Record<string, string[]> = {};
    for (const version of secret.versions.values()) if (version.stages.length > 0) versionIdsToStages[version.id] = [...version.stages];
    return {
      ARN: secret.arn,
      Name: secret.name,
      ...(secret.description !== undefined ? { Description: secret.description } : {}),
      ...(secret.kmsKeyId ? { KmsKeyId: secret.kmsKeyId } : {}),
      LastChangedDate: seconds(secret.lastChanged),
      ...(secret.lastAccessed ? { LastAccessedDate: seconds(secret.lastAccessed) } : {}),
      ...(secret.deleted ? { DeletedDate: seconds(secret.deleted) } : {}),
      ...(secret.tags.size > 0 ? { Tags: [...secret.tags].map(([Key, Value]) => ({ Key, Value })) } : {}),
      ...(Object.keys(versionIdsToStages).length > 0 ? { VersionIdsToStages: versionIdsToStages } : {}),
      CreatedDate: seconds(secret.created),
    };
  }

  getSecretValue(input: Json, principal: string): Json {
    const secretId = requiredString(input, 'SecretId', 2048);
    const versionId = optionalString(input, 'VersionId', 64);
    const stage = optionalString(input, 'VersionStage', 256);
    this.authorize(principal, 'secretsmanager:GetSecretValue', secretId);
    const secret = this.find(secretId);
    if (!secret) throw notFound();
    if (secret.deleted) throw markedForDeletion();
    let version: StoredVersion | undefined;
    if (versionId) {
      version = secret.versions.get(versionId);
      if (!version)
        throw new AwsError(
          'ResourceNotFoundException',
          `Secrets Manager can't find the specified secret value for VersionId: ${versionId}`,
        );
      if (stage && !version.stages.includes(stage)) {
        throw new AwsError('InvalidRequestException', 'You provided a VersionStage that is not associated to the provided VersionId.');
      }
    } else {
      const label = stage ?? CURRENT;
      version = [...secret.versions.values()].find((v) => v.stages.includes(label));
      if (!version)
        throw new AwsError(
          'ResourceNotFoundException',
          `Secrets Manager can't find the specified secret value for staging label: ${label}`,
        );
    }
    this.useKey(secret.kmsKeyId, 'decrypt');
    const now = this.clock.now();
    secret.lastAccessed = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    return {
      ARN: secret.arn,
      Name: secret.name,
      VersionId: version.id,
      ...(version.text !== undefined ? { SecretString: version.text } : {}),
      ...(version.binary !== undefined ? { SecretBinary: version.binary.toString('base64') } : {}),
      VersionStages: [...version.stages],
      CreatedDate: seconds(version.created),
    };
  }

  putSecretValue(input: Json, principal: string): Json {
    const secretId = requiredString(input, 'SecretId', 2048);
    const token = optionalToken(input);
    const value = secretValue(input);
    const stages = input.VersionStages === undefined ? undefined : stringList(input.VersionStages, 'versionStages', 20);
    this.authorize(principal, 'secretsmanager:PutSecretValue', secretId);
    const secret = this.find(secretId);
    if (!secret) throw notFound();
    if (secret.deleted) throw markedForDeletion();
    if (!value) throw new AwsError('InvalidRequestException', 'You must provide either SecretString or SecretBinary.');
    // The SDKs always send one; a raw request must (the API reference says so).
    if (!token) throw new AwsError('InvalidRequestException', 'You must provide a ClientRequestToken.');
    const existing = secret.versions.get(token);
    if (existing) {
      // Idempotent: the same token and value is the version there, nothing moves.
      if (sameValue(existing, value))
        return { ARN: secret.arn, Name: secret.name, VersionId: existing.id, VersionStages: [...existing.stages] };
      throw new AwsError('ResourceExistsException', "You can't modify an existing version, you can only create a new version.");
    }
    this.useKey(secret.kmsKeyId, 'encrypt');
    const version = this.addVersion(secret, token, value, stages);
    return { ARN: secret.arn, Name: secret.name, VersionId: version.id, VersionStages: [...version.stages] };
  }

  tagResource(input: Json, principal: string): Json {
    const secretId = requiredString(input, 'SecretId', 2048);
    if (input.Tags === undefined) throw validation('tags', 'Member must not be null');
    const tags = tagList(input.Tags);
    this.authorize(principal, 'secretsmanager:TagResource', secretId);
    const secret = this.find(secretId);
    if (!secret) throw notFound();
    if (secret.deleted) throw markedForDeletion();
    const keys = new Set([...secret.tags.keys(), ...tags.map((t) => t.Key)]);
    if (keys.size > MAX_TAGS) throw invalidParameter(`A secret can have at most ${MAX_TAGS} tags.`);
    setTags(secret, tags);
    secret.lastChanged = this.clock.now();
    return {};
  }

  untagResource(input: Json, principal: string): Json {
    const secretId = requiredString(input, 'SecretId', 2048);
    const keys = stringList(input.TagKeys, 'tagKeys', 200);
    this.authorize(principal, 'secretsmanager:UntagResource', secretId);
    const secret = this.find(secretId);
    if (!secret) throw notFound();
    if (secret.deleted) throw markedForDeletion();
    for (const key of keys) secret.tags.delete(key);
    secret.lastChanged = this.clock.now();
    return {};
  }

  deleteSecret(input: Json, principal: string): Json {
    const secretId = requiredString(input, 'SecretId', 2048);
    const force = input.ForceDeleteWithoutRecovery === true;
    const window = input.RecoveryWindowInDays;
    if (force && window !== undefined) {
      throw invalidParameter("You can't use ForceDeleteWithoutRecovery in conjunction with RecoveryWindowInDays.");
    }
    if (window !== undefined && (typeof window !== 'number' || !Number.isInteger(window) || window < 7 || window > 30)) {
      throw invalidParameter('The RecoveryWindowInDays value must be between 7 and 30 days (inclusive).');
    }
    this.authorize(principal, 'secretsmanager:DeleteSecret', secretId);
    const secret = this.find(secretId);
    if (!secret) throw notFound();
    if (secret.deleted && !force) throw markedForDeletion();
    const now = this.clock.now();
    if (force) {
      this.secrets.delete(secret.name);
      return { ARN: secret.arn, Name: secret.name, DeletionDate: seconds(now) };
    }
    secret.deleted = now;
    return { ARN: secret.arn, Name: secret.name, DeletionDate: seconds(now) + ((window as number | undefined) ?? 30) * 86_400 };
  }

  restoreSecret(input: Json, principal: string): Json {
    const secretId = requiredString(input, 'SecretId', 2048);
    this.authorize(principal, 'secretsmanager:RestoreSecret', secretId);
    const secret = this.find(secretId);
    if (!secret) throw notFound();
    delete secret.deleted;
    return { ARN: secret.arn, Name: secret.name };
  }

  listSecretVersionIds(input: Json, principal: string): Json {
    const secretId = requiredString(input, 'SecretId', 2048);
    const max = input.MaxResults === undefined ? 100 : input.MaxResults;
    if (typeof max !== 'number' || !Number.isInteger(max) || max < 1 || max > 100) {
      throw validation('maxResults', 'Member must have value between 1 and 100');
    }
    this.authorize(principal, 'secretsmanager:ListSecretVersionIds', secretId);
    const secret = this.find(secretId);
    if (!secret) throw notFound();
    const all = [...secret.versions.values()].filter((v) => input.IncludeDeprecated === true || v.stages.length > 0);
    let start = 0;
    if (input.NextToken !== undefined) {
      start = typeof input.NextToken === 'string' ? Number(Buffer.from(input.NextToken, 'base64url').toString('utf8')) : NaN;
      if (!Number.isInteger(start) || start < 0 || start > all.length)
        throw new AwsError('InvalidNextTokenException', 'The NextToken value is invalid.');
    }
    const page = all.slice(start, start + max);
    const next = start + page.length < all.length ? Buffer.from(String(start + page.length)).toString('base64url') : undefined;
    return {
      Versions: page.map((v) => ({
        VersionId: v.id,
        ...(v.stages.length > 0 ? { VersionStages: [...v.stages] } : {}),
        CreatedDate: seconds(v.created),
        ...(secret.kmsKeyId ? { KmsKeyIds: [secret.kmsKeyId] } : { KmsKeyIds: ['DefaultEncryptionKey'] }),
      })),
      ...(next ? { NextToken: next } : {}),
      ARN: secret.arn,
      Name: secret.name,
    };
  }

  // ---- rules ----

  /**
   * A new version with its labels: AWSCURRENT by default (always for a secret's first), moved from
   * the version that had it, which gets AWSPREVIOUS; deprecated versions beyond the limit removed
   * once a day old.
   */
  addVersion(secret: StoredSecret, id: string, value: SecretValue, requested: string[] | undefined): StoredVersion {
    const now = this.clock.now();
    this.makeRoom(secret, now);
    const stages = [...new Set(requested ?? [CURRENT])];
    if (secret.versions.size === 0 && !stages.includes(CURRENT)) stages.push(CURRENT);
    if (stages.includes(CURRENT)) {
      const previous = [...secret.versions.values()].find((v) => v.stages.includes(CURRENT));
      for (const v of secret.versions.values()) v.stages = v.stages.filter((s) => s !== PREVIOUS);
      if (previous) previous.stages = [...previous.stages.filter((s) => s !== CURRENT), PREVIOUS];
    }
    for (const v of secret.versions.values()) v.stages = v.stages.filter((s) => !stages.includes(s));
    const version: StoredVersion = { id, ...value, stages, created: now };
    secret.versions.set(id, version);
    secret.lastChanged = now;
    return version;
  }

  private makeRoom(secret: StoredSecret, now: Date): void {
    if (secret.versions.size < this.maxVersions) return;
    for (const version of [...secret.versions.values()]) {
      if (secret.versions.size < this.maxVersions) return;
      if (version.stages.length === 0 && now.getTime() - version.created.getTime() >= DAY_MS) secret.versions.delete(version.id);
    }
    if (secret.versions.size >= this.maxVersions) {
      throw new AwsError(
        'LimitExceededException',
        `You can't create more versions of ${secret.name}: it has ${secret.versions.size}, the most Secrets Manager keeps, and none can be removed yet (versions of the last 24 hours are kept).`,
      );
    }
  }

  private useKey(kmsKeyId: string | undefined, use: 'encrypt' | 'decrypt'): void {
    if (!kmsKeyId || !this.deniedKmsKeys.has(kmsKeyId)) return;
    throw new AwsError(use === 'encrypt' ? 'EncryptionFailure' : 'DecryptionFailure', 'Access to KMS is not allowed');
  }
}

type SecretValue = { text: string } | { binary: Buffer };

function sameValue(version: StoredVersion, value: SecretValue): boolean {
  if ('text' in value) return version.text === value.text && version.binary === undefined;
  return version.binary !== undefined && version.binary.equals(value.binary) && version.text === undefined;
}

function requiredString(input: Json, member: string, max: number): string {
  const value = input[member];
  const name = member.charAt(0).toLowerCase() + member.slice(1);
  if (value === undefined || value === null) throw validation(name, 'Member must not be null');
  if (typeof value !== 'string') throw new AwsError('SerializationException', `Expected a string for ${member}`);
  if (value.length < 1) throw validation(name, 'Member must have length greater than or equal to 1');
  if (value.length > max) throw validation(name, `Member must have length less than or equal to ${max}`);
  return value;
}

function optionalString(input: Json, member: string, max: number): string | undefined {
  return input[member] === undefined ? undefined : requiredString(input, member, max);
}

function optionalToken(input: Json): string | undefined {
  const token = input.ClientRequestToken;
  if (token === undefined) return undefined;
  if (typeof token !== 'string') throw new AwsError('SerializationException', 'Expected a string for ClientRequestToken');
  if (token.length < 32) throw validation('clientRequestToken', 'Member must have length greater than or equal to 32');
  if (token.length > 64) throw validation('clientRequestToken', 'Member must have length less than or equal to 64');
  return token;
}

function secretValue(input: Json): SecretValue | undefined {
  const text = input.SecretString;
  const binary = input.SecretBinary;
  if (text !== undefined && binary !== undefined) {
    throw invalidParameter("You can't specify both a binary secret value and a string secret value in the same secret.");
  }
  if (text !== undefined) {
    if (typeof text !== 'string') throw new AwsError('SerializationException', 'Expected a string for SecretString');
    if (text.length < 1) throw validation('secretString', 'Member must have length greater than or equal to 1');
    if (Buffer.byteLength(text) > MAX_VALUE_BYTES)
      throw validation('secretString', `Member must have length less than or equal to ${MAX_VALUE_BYTES}`);
    return { text };
  }
  if (binary !== undefined) {
    if (typeof binary !== 'string') throw new AwsError('SerializationException', 'Expected a base64 string for SecretBinary');
    const bytes = Buffer.from(binary, 'base64');
    if (bytes.length < 1 || bytes.length > MAX_VALUE_BYTES) throw validation('secretBinary', 'Member must have length between 1 and 65536');
    return { binary: bytes };
  }
  return undefined;
}

function stringList(value: unknown, member: string, max: number): string[] {
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string'))
    throw new AwsError('SerializationException', `Expected a list of strings for ${member}`);
  if (value.length > max) throw validation(member, `Member must have length less than or equal to ${max}`);
  return value as string[];
}

function tagList(value: unknown): { Key: string; Value: string }[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new AwsError('SerializationException', 'Expected a list for Tags');
  return value.map((tag: unknown) => {
    const { Key, Value } = (tag ?? {}) as { Key?: unknown; Value?: unknown };
    if (typeof Key !== 'string' || Key.length < 1 || Key.length > 128 || !TAG_TEXT.test(Key)) {
      throw invalidParameter('Invalid tag key: a key is 1 to 128 letters, digits, spaces and _ . : / = + - @');
    }
    if (Key.toLowerCase().startsWith('aws:')) throw invalidParameter('Invalid tag key: the aws: prefix is reserved for AWS use.');
    const text = Value === undefined ? '' : Value;
    if (typeof text !== 'string' || text.length > 256 || !TAG_TEXT.test(text)) {
      throw invalidParameter('Invalid tag value: a value is at most 256 letters, digits, spaces and _ . : / = + - @');
    }
    return { Key, Value: text };
  });
}

function setTags(secret: StoredSecret, tags: { Key: string; Value: string }[]): void {
  for (const { Key, Value } of tags) secret.tags.set(Key, Value);
}

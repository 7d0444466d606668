import { createHash } from 'node:crypto';

import type { StoredTokenMeta, TokenMeta } from '../sink.js';
import { metadataValues, storedMetadata, type ValueCodec } from './../token-metadata.js';

/** The ownership marker, written on create (and on the first write of an adopted secret). */
export const MANAGED_BY_TAG = 'managed-by';
export const MANAGED_BY = 'token-rotator';

/** Beside the secret, never in it: what drift repair and a lost state are recovered from. */
export const META_TAGS = {
  tokenName: 'token-rotator:token-name',
  tokenId: 'token-rotator:token-id',
  expiresAt: 'token-rotator:expires-at',
  rotationId: 'token-rotator:rotation-id',
  rotatedAt: 'token-rotator:rotated-at',
} as const;

const RESERVED_PREFIX = 'token-rotator:';
/** Secrets Manager holds at most 50 tags on a secret; ours are the marker and the five above. */
export const MAX_USER_TAGS = 50 - 1 - Object.keys(META_TAGS).length;

/** AWS's tag rules: letters, digits, spaces and `_ . : / = + - @` in any script. */
export const TAG_KEY = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]{1,128}$/u;
export const TAG_VALUE = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]{0,256}$/u;

export const isReservedTagKey = (key: string): boolean => key === MANAGED_BY_TAG || key.startsWith(RESERVED_PREFIX);

export interface Tag {
  Key: string;
  Value: string;
}

/**
 * A value a tag cannot hold as it is (a token id with `#` in it) is kept as `b64:` and its
 * base64url; so is one that starts with `b64:`, so that reading it back is never ambiguous.
 */
const ENCODED = 'b64:';
const TAG_VALUES: ValueCodec = { encode: encodeTagValue, decode: decodeTagValue };
function encodeTagValue(value: string, what: string): string {
  if (TAG_VALUE.test(value) && !value.startsWith(ENCODED)) return value;
  const encoded = `${ENCODED}${Buffer.from(value, 'utf8').toString('base64url')}`;
  // Only a long id with characters a tag cannot hold gets here: never seen, but never cut short.
  if (encoded.length > 256)
    throw new Error(`the ${what} cannot be kept in a tag: its characters need encoding, and encoded it is longer than a tag's 256`);
  return encoded;
}
function decodeTagValue(value: string | undefined): string | undefined {
  if (value === undefined || !value.startsWith(ENCODED)) return value;
  return Buffer.from(value.slice(ENCODED.length), 'base64url').toString('utf8');
}

/** Every tag a write leaves on the secret: the policy's, the marker, the token's metadata. Throws when a value cannot be a tag. */
export function desiredTags(policyTags: Record<string, string>, meta: TokenMeta): Tag[] {
  const tags: Record<string, string> = {
    ...policyTags,
    [MANAGED_BY_TAG]: MANAGED_BY,
    ...metadataValues(meta, META_TAGS, TAG_VALUES),
  };
  return Object.entries(tags).map(([Key, Value]) => ({ Key, Value }));
}

export function tagMap(tags: readonly { Key?: string | undefined; Value?: string | undefined }[] | undefined): Record<string, string> {
  const map: Record<string, string> = {};
  for (const tag of tags ?? []) if (tag.Key !== undefined) map[tag.Key] = tag.Value ?? '';
  return map;
}

export const isMarked = (tags: Record<string, string>): boolean => tags[MANAGED_BY_TAG] === MANAGED_BY;

/** The rotation the tags say the secret's value came from; undefined when they do not say. */
export const taggedRotationId = (tags: Record<string, string>): string | undefined => decodeTagValue(tags[META_TAGS.rotationId]);

export const storedMeta = (tags: Record<string, string>): StoredTokenMeta => storedMetadata(tags, META_TAGS, TAG_VALUES);

/**
 * How many versions one rotation may add to a secret: the first holds its secret; another is added
 * only when the same rotation must write a different value (a JSON secret whose other fields
 * changed) or the value it wrote was replaced since and must be written again.
 */
export const VERSIONS_PER_ROTATION = 16;

/** A ClientRequestToken as the API takes it: 32 to 64 characters; these are the safe ones. */
const REQUEST_TOKEN = /^[A-Za-z0-9-]{32,64}$/;

/**
 * The ClientRequestToken (so the VersionId) of a rotation's `attempt`th version of a secret. The
 * first is the rotation id itself when it can be one (a UUID, as rotations have), so a version
 * names its rotation; otherwise, and for later attempts, a UUID derived from it (as UUID version 5
 * derives one from a name). A write retried after a crash sends the same token with the same
 * value, and Secrets Manager answers the version it already has instead of adding another.
 */
export function versionToken(rotationId: string, attempt: number): string {
  if (attempt === 0 && REQUEST_TOKEN.test(rotationId)) return rotationId;
  const hash = createHash('sha256').update(`token-rotator/aws-secrets-manager\0${rotationId}\0${attempt}`).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Whether `versionId` is one of the versions `rotationId` writes: the tags describe that version. */
export function isVersionOf(versionId: string | undefined, rotationId: string | undefined): boolean {
  if (!versionId || !rotationId) return false;
  for (let attempt = 0; attempt < VERSIONS_PER_ROTATION; attempt++) if (versionToken(rotationId, attempt) === versionId) return true;
  return false;
}

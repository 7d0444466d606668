import type { StoredTokenMeta, TokenMeta } from './sink.js';

/**
 * Where a sink keeps each piece of the token's metadata beside the secret: tag, label, annotation
 * or custom-metadata names, which differ by store; the values and their meaning do not.
 */
export interface MetadataKeys {
  tokenName: string;
  tokenId: string;
  expiresAt: string;
  rotationId: string;
  rotatedAt: string;
}

/** How a store that cannot hold every character writes a value, and reads it back. */
export interface ValueCodec {
  encode(value: string, what: string): string;
  decode(value: string | undefined): string | undefined;
}

const AS_IS: ValueCodec = { encode: (value) => value, decode: (value) => value };

/** `never` for a token that never expires: a store's values are strings, and an absent key means "not said". */
const NEVER = 'never';

/** The metadata a write leaves beside the secret, never the secret itself. */
export function metadataValues(meta: TokenMeta, keys: MetadataKeys, codec: ValueCodec = AS_IS): Record<string, string> {
  return {
    [keys.tokenName]: codec.encode(meta.name, 'token name'),
    [keys.tokenId]: codec.encode(meta.id, 'token id'),
    [keys.expiresAt]: meta.expiresAt ? meta.expiresAt.toISOString() : NEVER,
    [keys.rotationId]: codec.encode(meta.rotationId, 'rotation id'),
    [keys.rotatedAt]: meta.rotatedAt.toISOString(),
  };
}

/** What a read finds of it: each field only when the store says it, for drift repair and state recovery. */
export function storedMetadata(values: Record<string, string>, keys: MetadataKeys, codec: ValueCodec = AS_IS): StoredTokenMeta {
  const name = codec.decode(values[keys.tokenName]);
  const id = codec.decode(values[keys.tokenId]);
  const expiresAt = values[keys.expiresAt];
  const rotationId = codec.decode(values[keys.rotationId]);
  const rotatedAt = values[keys.rotatedAt];
  return {
    ...(name ? { name } : {}),
    ...(id ? { id } : {}),
    ...(expiresAt ? { expiresAt: expiresAt === NEVER ? null : expiresAt } : {}),
    ...(rotationId ? { rotationId } : {}),
    ...(rotatedAt ? { rotatedAt } : {}),
  };
}

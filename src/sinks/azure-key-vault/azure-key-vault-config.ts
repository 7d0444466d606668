import * as z from 'zod';

import { fromZodIssues } from '../../common/config-issues.js';
import { strictObject } from '../../common/strict-object.js';
import type { SinkParseResult } from '../sink.js';

export interface AzureKeyVaultSinkConfig {
  type: 'azure-key-vault';
  /** The vault's origin, as the Azure portal shows it: `https://myvault.vault.azure.net`. */
  vaultUrl: string;
  /** The secret's name: letters, digits and dashes; Key Vault compares names without case. */
  name: string;
  /** Stored with each version (`text/plain`); none when absent. */
  contentType: string | undefined;
  /** Tags of the policy's own, written on every version beside token-rotator's. */
  tags: Record<string, string>;
  /** Take over a secret that token-rotator does not manage (no managed-by tag on its latest version). */
  adopt: boolean;
}

/** The tag that marks a secret as token-rotator's, as External Secrets Operator marks its own. */
export const MANAGED_BY_TAG = 'managed-by';
export const MANAGED_BY = 'token-rotator';

/** Beside the secret, never in it: what drift repair and a lost state are recovered from. */
export const META_TAGS = {
  tokenName: 'token-name',
  tokenId: 'token-id',
  expiresAt: 'expires-at',
  rotationId: 'rotation-id',
  rotatedAt: 'rotated-at',
} as const;

const OUR_TAGS: readonly string[] = [MANAGED_BY_TAG, ...Object.values(META_TAGS)];

/** Key Vault's limits: 15 tags a version, names up to 512 characters, values up to 256. */
export const MAX_TAGS = 15;
export const MAX_TAG_NAME = 512;
export const MAX_TAG_VALUE = 256;

/** `^[0-9a-zA-Z-]+$`, 1 to 127 characters: Key Vault's object names. */
const SECRET_NAME = /^[0-9a-zA-Z-]{1,127}$/;

// Exported for the policy's JSON Schema (src/config/policy-json-schema.ts), which editors check against.
export const schema = strictObject({
  type: z.literal('azure-key-vault'),
  vaultUrl: z.string().min(1),
  name: z.string().regex(SECRET_NAME, 'must be a Key Vault secret name: 1 to 127 letters, digits and "-"'),
  contentType: z.string().min(1).max(255, 'at most 255 characters').optional(),
  tags: z
    .record(
      z.string().min(1).max(MAX_TAG_NAME, `at most ${MAX_TAG_NAME} characters`),
      z.string().max(MAX_TAG_VALUE, `a tag value has at most ${MAX_TAG_VALUE} characters`),
    )
    .superRefine((tags, ctx) => {
      for (const key of Object.keys(tags)) {
        if (OUR_TAGS.includes(key.toLowerCase())) ctx.addIssue({ code: 'custom', path: [key], message: 'is set by token-rotator itself' });
      }
      const room = MAX_TAGS - OUR_TAGS.length;
      if (Object.keys(tags).length > room) {
        ctx.addIssue({
          code: 'custom',
          message: `at most ${room} tags: Key Vault keeps ${MAX_TAGS} a version, and token-rotator writes ${OUR_TAGS.length}`,
        });
      }
    })
    .default({}),
  adopt: z.boolean().default(false),
});

/**
 * The vault's origin, or why it is not one. Only the origin: the SDK builds every path under it, and
 * a path, query or credentials in the URL would be ignored or, worse, sent along.
 */
function vaultOrigin(value: string): { origin: string } | { problem: string } {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { problem: 'must be the vault URL, such as https://myvault.vault.azure.net' };
  }
  if (url.protocol !== 'https:') return { problem: 'must be an https:// URL: Key Vault is only served over TLS' };
  if (url.username || url.password) return { problem: 'must not hold credentials' };
  if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash) {
    return { problem: `must be the vault's URL alone (${url.origin}), without a path or query` };
  }
  return { origin: url.origin };
}

export function parseAzureKeyVaultConfig(raw: unknown): SinkParseResult<AzureKeyVaultSinkConfig> {
  const parsed = schema.safeParse(raw, { reportInput: true });
  const issues = parsed.success ? [] : fromZodIssues(parsed.error.issues);
  if (!parsed.success) return { ok: false, issues };
  const { vaultUrl, name, contentType, tags, adopt } = parsed.data;
  const vault = vaultOrigin(vaultUrl);
  if ('problem' in vault) return { ok: false, issues: [{ path: 'vaultUrl', message: vault.problem }] };
  return { ok: true, config: { type: 'azure-key-vault', vaultUrl: vault.origin, name, contentType, tags, adopt } };
}

/** `azure-key-vault myvault.vault.azure.net/secrets/ingest-token`: for tables, logs and every error about it. */
export const describeAzureKeyVaultSecret = (config: AzureKeyVaultSinkConfig) =>
  `azure-key-vault ${new URL(config.vaultUrl).host}/secrets/${config.name}`;

/**
 * `azure-key-vault:myvault.vault.azure.net/ingest-token`: the vault's host as the URL parser leaves
 * it (lower case, no default port; the path, slash included, is refused) without a trailing dot,
 * and the name in lower case, since Key Vault compares names without case.
 */
export const azureKeyVaultTarget = (config: AzureKeyVaultSinkConfig) =>
  upgradeAzureKeyVaultTarget(`azure-key-vault:${new URL(config.vaultUrl).host}/${config.name}`);

/** A target in lower case, and without the host's trailing dot that targets written before kept. */
export const upgradeAzureKeyVaultTarget = (stored: string) => stored.toLowerCase().replace(/\.(?=(:\d+)?\/)/, '');

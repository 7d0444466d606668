import { isAbsolute, resolve } from 'node:path';

import * as z from 'zod';

import { fromZodIssues } from '../../common/config-issues.js';
import { isLoopbackHost } from '../../common/loopback.js';
import { variableNameSchema } from '../../common/reference.js';
import { strictObject } from '../../common/strict-object.js';
import type { ConfigIssue } from '../../errors.js';
import type { SinkParseContext, SinkParseResult } from '../sink.js';

/** How the sink gets a Vault token: the one given, or one a login returns. */
export type VaultAuth =
  /** A token as it is: `tokenFrom` names the variable (or `NAME_FILE`), VAULT_TOKEN by default. */
  | { method: 'token'; tokenFrom: string }
  /** The pod's service account token, exchanged at `auth/<mount>/login` for a Vault token of `role`. */
  | { method: 'kubernetes'; role: string; mount: string; jwtFile: string }
  /** A role id and secret id, both by reference, exchanged at `auth/<mount>/login`. */
  | { method: 'approle'; roleIdFrom: string; secretIdFrom: string; mount: string };

export interface VaultSinkConfig {
  type: 'vault';
  /** `https://vault:8200` (no trailing slash): the sink's `address`, else VAULT_ADDR. */
  address: string;
  /** Enterprise / OpenBao namespace, sent as X-Vault-Namespace: the sink's, else VAULT_NAMESPACE. */
  namespace?: string;
  /** A PEM file of CAs to trust for the address (absolute): the sink's `caCertFile`, else VAULT_CACERT. */
  caCertFile?: string;
  /** The KV version 2 engine's mount path, without slashes at either end. */
  mount: string;
  /** The secret's path inside the mount, without slashes at either end. */
  path: string;
  /** The field of the secret's data that holds the token; the other fields are kept. */
  key: string;
  auth: VaultAuth;
  /** Take over a secret that token-rotator does not manage (no `managed-by: token-rotator` custom metadata). */
  adopt: boolean;
}

export const DEFAULT_TOKEN_VARIABLE = 'VAULT_TOKEN';
export const DEFAULT_JWT_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** Control characters, and what a URL path would read as another segment or a query. */
// eslint-disable-next-line no-control-regex
const UNSAFE_IN_PATH = /[\u0000-\u001f\u007f?#%\\]/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** What KV version 2 puts between the mount and the secret's path in its API; no part of a secret's path. */
const API_SEGMENT = /^(data|metadata)\//;

/** A mount or secret path: segments joined by `/`, none empty, `.` or `..`. */
function vaultPath(what: string, example: string) {
  return z
    .string()
    .min(1, 'must not be empty')
    .max(512, 'at most 512 characters')
    .refine((p) => !UNSAFE_IN_PATH.test(p), `must not contain control characters, ?, #, % or \\`)
    .refine((p) => !p.startsWith('/') && !p.endsWith('/'), `must not start or end with /: write the ${what} as \`${example}\``)
    .refine(
      // Slashes at either end are said above; inside, every segment must name something.
      (p) =>
        p
          .replace(/^\/+|\/+$/g, '')
          .split('/')
          .every((s) => s !== '' && s !== '.' && s !== '..'),
      'must not have an empty, "." or ".." segment',
    );
}

const authSchema = z.discriminatedUnion(
  'method',
  [
    strictObject({ method: z.literal('token'), tokenFrom: variableNameSchema.optional() }),
    strictObject({
      method: z.literal('kubernetes'),
      role: z.string().min(1, 'must not be empty').max(256),
      mount: vaultPath('auth mount', 'kubernetes').default('kubernetes'),
      jwtFile: z.string().min(1, 'must not be empty').default(DEFAULT_JWT_FILE),
    }),
    strictObject({
      method: z.literal('approle'),
      roleIdFrom: variableNameSchema,
      secretIdFrom: variableNameSchema,
      mount: vaultPath('auth mount', 'approle').default('approle'),
    }),
  ],
  { error: (issue) => (issue.code === 'invalid_union' ? 'must be one of: "token", "kubernetes", "approle"' : undefined) },
);

// Exported for the policy's JSON Schema (src/config/policy-json-schema.ts), which editors check against.
export const schema = strictObject({
  type: z.literal('vault'),
  address: z.string().optional(),
  namespace: z
    .string()
    .min(1, 'must not be empty')
    .max(512)
    .refine((ns) => !UNSAFE_IN_PATH.test(ns), 'must not contain control characters, ?, #, % or \\')
    .optional(),
  caCertFile: z.string().min(1, 'must not be empty').optional(),
  mount: vaultPath('mount', 'secret').default('secret'),
  path: vaultPath('path', 'apps/ingest').refine(
    // The API's path pasted in (secret/data/apps/ingest): the sink would write data/apps/ingest, another secret.
    (p) => !API_SEGMENT.test(p),
    "starts with the KV version 2 API's data/ or metadata/: write the path inside the mount (apps/ingest for secret/data/apps/ingest); token-rotator adds them itself",
  ),
  key: z
    .string()
    .min(1, 'must not be empty')
    .max(256, 'at most 256 characters')
    .refine((k) => !CONTROL.test(k), 'must not contain control characters')
    .default('token'),
  auth: authSchema.default({ method: 'token' }),
  adopt: z.boolean().default(false),
});

/** The address as requests are built from it, or why it cannot be used. Never echoes a userinfo part. */
export function normalizeAddress(value: string): { address: string } | { problem: string } {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { problem: 'is not a URL (write it as https://vault.example.com:8200)' };
  }
  if (url.username || url.password) return { problem: 'must not carry a user name or password; the token comes by auth' };
  if (url.search || url.hash) return { problem: 'must not have a query or a fragment' };
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    return { problem: 'must be an https:// URL (plain http only on loopback: the token travels with every request)' };
  }
  const path = url.pathname.replace(/\/+$/, '');
  return { address: `${url.origin}${path}` };
}

export function parseVaultConfig(raw: unknown, context: SinkParseContext): SinkParseResult<VaultSinkConfig> {
  const env = context.env ?? {};
  const parsed = schema.safeParse(raw, { reportInput: true });
  const issues: ConfigIssue[] = parsed.success ? [] : fromZodIssues(parsed.error.issues);

  // Said even when other fields are wrong, so that one run names every problem.
  const given = (raw as { address?: unknown } | null)?.address;
  let address: string | undefined;
  // Anything but a string is the schema's to report.
  if (typeof given === 'string' || given === undefined) {
    const fromEnv = given === undefined;
    const value = fromEnv ? env.VAULT_ADDR : given;
    if (value === undefined || value === '') {
      issues.push({ path: 'address', message: 'required here: the sink names no address, and VAULT_ADDR is not set' });
    } else {
      const normal = normalizeAddress(value);
      if ('problem' in normal) issues.push({ path: 'address', message: `${fromEnv ? 'VAULT_ADDR ' : ''}${normal.problem}` });
      else address = normal.address;
    }
  }
  if (!parsed.success || !address || issues.length > 0) return { ok: false, issues };

  const { namespace, caCertFile, mount, path, key, auth, adopt } = parsed.data;
  const ns = normalNamespace(namespace ?? env.VAULT_NAMESPACE);
  // A file the sink names is relative to the policy; VAULT_CACERT, like every *_FILE variable, to where the tool runs.
  const ca = caCertFile ? resolve(context.policyDir, caCertFile) : env.VAULT_CACERT ? resolve(env.VAULT_CACERT) : undefined;
  return {
    ok: true,
    config: {
      type: 'vault',
      address,
      ...(ns ? { namespace: ns } : {}),
      ...(ca ? { caCertFile: ca } : {}),
      mount,
      path,
      key,
      auth: normalizeAuth(auth, context.policyDir),
      adopt,
    },
  };
}

/** `team-a/apps`, however slashed (`/team-a//apps/`): Vault reads them alike. Undefined for the root namespace. */
function normalNamespace(namespace: string | undefined): string | undefined {
  const segments = (namespace ?? '').split('/').filter((segment) => segment !== '');
  return segments.length > 0 ? segments.join('/') : undefined;
}

function normalizeAuth(auth: z.infer<typeof authSchema>, policyDir: string): VaultAuth {
  switch (auth.method) {
    case 'token':
      return { method: 'token', tokenFrom: auth.tokenFrom ?? DEFAULT_TOKEN_VARIABLE };
    case 'kubernetes':
      return {
        method: 'kubernetes',
        role: auth.role,
        mount: auth.mount,
        jwtFile: isAbsolute(auth.jwtFile) ? auth.jwtFile : resolve(policyDir, auth.jwtFile),
      };
    case 'approle':
      return { method: 'approle', roleIdFrom: auth.roleIdFrom, secretIdFrom: auth.secretIdFrom, mount: auth.mount };
  }
}

/** `vault https://vault:8200 secret/apps/ingest[token]`: for tables, logs and every error about it. */
export const describeVaultSecret = (config: VaultSinkConfig) =>
  `vault ${config.address} ${config.namespace ? `${config.namespace}/` : ''}${config.mount}/${config.path}[${config.key}]`;

/**
 * `vault:https://vault:8200/team-a/secret/apps/ingest`: the address (origin in lower case, no
 * default port or trailing slash), then the namespace, mount and path as one path, as Vault itself
 * reads a namespace given in the path (namespace `team-a` with mount `secret` is mount
 * `team-a/secret` without one). One secret, one token: the custom metadata (token id, rotation) is
 * the secret's, not a field's, so the key is no part of it.
 */
export const vaultTarget = (config: VaultSinkConfig) =>
  upgradeVaultTarget(`vault:${config.address}/${config.namespace ?? ''}/${config.mount}/${config.path}`);

/** Empty segments dropped: what targets written before namespaces were normalised (`team-a//secret/…`) read as now. */
export function upgradeVaultTarget(stored: string): string {
  const scheme = /^vault:[a-z]+:\/\//.exec(stored)?.[0];
  return scheme
    ? scheme +
        stored
          .slice(scheme.length)
          .replace(/\/{2,}/g, '/')
          .replace(/\/$/, '')
    : stored;
}

/** The API paths of the secret: what a Vault policy names. */
export const dataPath = (config: Pick<VaultSinkConfig, 'mount' | 'path'>) => `${config.mount}/data/${config.path}`;
export const metadataPath = (config: Pick<VaultSinkConfig, 'mount' | 'path'>) => `${config.mount}/metadata/${config.path}`;

import { SinkError } from '../../errors.js';
import { Secret } from '../../secret.js';
import { refuseOtherToken } from '../ownership.js';
import type { SinkClient, SinkOpenContext, StoredTokenMeta, TokenMeta } from '../sink.js';
import { metadataValues, storedMetadata } from './../token-metadata.js';
import { connectionKey, type VaultAnswer, vaultErrors, VaultSession } from './vault-http.js';
import { dataPath, describeVaultSecret, metadataPath, type VaultSinkConfig } from './vault-sink-config.js';

/**
 * The secret's custom metadata (KV v2 keeps it per secret, not per version) beside the data, never
 * the secret in it: what drift repair and a lost state are recovered from. `data-version` says which
 * version of the data the rest describes, so that a version written by someone else after ours (or
 * ours, when a run stopped between the data and the metadata) is never taken for the token it names.
 */
export const CUSTOM_METADATA = {
  managedBy: 'managed-by',
  tokenName: 'token-name',
  tokenId: 'token-id',
  expiresAt: 'expires-at',
  rotationId: 'rotation-id',
  rotatedAt: 'rotated-at',
  dataVersion: 'data-version',
} as const;
export const MANAGED_BY = 'token-rotator';

/** Vault's words when a write's `cas` is not the current version. */
const CAS_MISMATCH = 'check-and-set parameter did not match the current version';

const describe = describeVaultSecret;

/** What the engine holds at the path, as far as a write and a read care. */
interface KvState {
  /**
   * `missing`: no secret at all; `empty`: metadata without a readable version (all deleted, or made by
   * `vault kv metadata put`); `deleted`: the latest version is deleted or destroyed; `present`: readable.
   */
  kind: 'missing' | 'empty' | 'deleted' | 'present';
  /** The current version: what a check-and-set write must name (0 when missing). */
  version: number;
  data: Record<string, unknown> | undefined;
  custom: Record<string, string>;
}

/** A KV v2 API path with each segment encoded: `secret/data/apps/ingest`. */
function apiPath(config: VaultSinkConfig, kind: 'data' | 'metadata'): string {
  return [...config.mount.split('/'), kind, ...config.path.split('/')].map(encodeURIComponent).join('/');
}

export function vaultClient(context: SinkOpenContext): SinkClient<VaultSinkConfig> {
  const sessions = new Map<string, VaultSession>();
  const session = (config: VaultSinkConfig): VaultSession => {
    const key = connectionKey(config);
    let found = sessions.get(key);
    if (!found) {
      found = new VaultSession(config, context);
      sessions.set(key, found);
    }
    return found;
  };

  /** Reads what is at the path: the latest version, or why there is none, and the custom metadata. */
  async function readState(s: VaultSession, config: VaultSinkConfig, doing: string, signal: AbortSignal | undefined): Promise<KvState> {
    const data = await kv(s, config, doing, 'GET', 'data', 'read', { signal, accept: [404] });
    const body = data.body?.data as { data?: unknown; metadata?: Record<string, unknown> } | undefined;
    const custom = customMetadataOf(body?.metadata?.custom_metadata);
    if (data.status === 200) {
      const version = Number(body?.metadata?.version ?? 0);
      const fields = body?.data && typeof body.data === 'object' && !Array.isArray(body.data) ? (body.data as Record<string, unknown>) : {};
      return { kind: 'present', version, data: fields, custom };
    }
    if (body?.metadata) {
      // The latest version is deleted or destroyed: Vault answers 404 with its metadata.
      return { kind: 'deleted', version: Number(body.metadata.version ?? 0), data: undefined, custom };
    }
    // No version to read: there may still be metadata (versions all gone, or written on its own).
    const meta = await kv(s, config, doing, 'GET', 'metadata', 'read', { signal, accept: [404] });
    if (meta.status === 404) return { kind: 'missing', version: 0, data: undefined, custom: {} };
    const m = meta.body?.data as Record<string, unknown> | undefined;
    return { kind: 'empty', version: Number(m?.current_version ?? 0), data: undefined, custom: customMetadataOf(m?.custom_metadata) };
  }

  /**
   * A KV call; a 403 is explained with the capability it needed. A read retried by got, a write
   * never (its check-and-set does that job).
   */
  async function kv(
    s: VaultSession,
    config: VaultSinkConfig,
    doing: string,
    method: 'GET' | 'POST' | 'PATCH',
    kind: 'data' | 'metadata',
    need: string,
    options: { signal: AbortSignal | undefined; accept?: number[]; json?: unknown; searchParams?: Record<string, string> },
  ): Promise<VaultAnswer> {
    const path = apiPath(config, kind);
    const answer = await s.call(method, path, {
      what: doing,
      signal: options.signal,
      accept: [...(options.accept ?? []), 403],
      ...(options.json !== undefined ? { json: options.json } : {}),
      ...(options.searchParams ? { searchParams: options.searchParams } : {}),
      ...(method === 'PATCH' ? { contentType: 'application/merge-patch+json' } : {}),
    });
    if (answer.status === 403 && !options.accept?.includes(403)) {
      const policyPath = kind === 'data' ? dataPath(config) : metadataPath(config);
      throw s.failure(method, path, doing, answer, await capabilityHint(s, options.signal, policyPath, need));
    }
    return answer;
  }

  return {
    async write(config, secret, meta, { signal }) {
      signal?.throwIfAborted();
      const doing = `cannot write ${describe(config)}`;
      const s = session(config);
      for (let attempt = 1; ; attempt++) {
        const current = await readState(s, config, doing, signal);
        const value = current.data?.[config.key];
        const holds = typeof value === 'string' && value === secret.reveal();
        const reason = foreignReason(config, current);
        // Only a run of ours that stopped between the data and its metadata leaves our brand-new
        // secret in an unmarked secret: that is finished, never refused; anything else is another's.
        const ourInterruptedWrite = holds && current.custom[CUSTOM_METADATA.managedBy] === undefined;
        if (reason && !ourInterruptedWrite) throw new SinkError(`refusing to write ${describe(config)}: it ${reason}`);
        refuseOtherToken(config, parseMeta(current.custom).name, meta.name, describe(config));
        const wanted = customMetadataFor(meta);
        if (holds && describesCurrent(current, wanted)) return 'unchanged';

        signal?.throwIfAborted();
        let version = current.version;
        if (!holds) {
          // Check-and-set on the version read: a write between our read and ours is never overwritten
          // unseen, and a retried write cannot add a second version.
          const fields = current.kind === 'present' ? current.data : {};
          const answer = await kv(s, config, doing, 'POST', 'data', current.kind === 'missing' ? 'create' : 'update', {
            signal,
            accept: [400],
            json: { options: { cas: current.version }, data: { ...fields, [config.key]: secret.reveal() } },
          });
          if (answer.status === 400) {
            if (vaultErrors(answer.body).some((e) => e.includes(CAS_MISMATCH)) && attempt < 2) {
              context.logger.info({ sink: describe(config) }, 'the Vault secret changed while writing it; reading it again');
              continue;
            }
            throw s.failure('POST', apiPath(config, 'data'), doing, answer, writeHint(answer));
          }
          version = Number((answer.body?.data as { version?: unknown } | undefined)?.version);
          if (!Number.isSafeInteger(version) || version < 1) {
            throw new SinkError(
              `${doing}: Vault answered the write without the version it made; check that ${config.mount}/ is a KV version 2 engine`,
            );
          }
        }
        // After the data: a run stopped in between leaves the secret ours to finish (see above).
        await kv(s, config, doing, 'PATCH', 'metadata', 'patch', {
          signal,
          json: { custom_metadata: { ...wanted, [CUSTOM_METADATA.dataVersion]: String(version) } },
        });
        return current.kind === 'missing' ? 'created' : 'updated';
      }
    },

    async read(config, { signal }) {
      signal?.throwIfAborted();
      const doing = `cannot read ${describe(config)}`;
      const s = session(config);
      const current = await readState(s, config, doing, signal);
      // A deleted latest version is a missing secret: drift, repaired by the next write.
      if (current.kind !== 'present') return undefined;
      const value = current.data?.[config.key];
      const secret = typeof value === 'string' && value !== '' ? new Secret(value) : undefined;
      const unowned = foreignReason(config, current);
      const meta = unowned ? {} : await storedMeta(s, config, doing, current, value, signal);
      return { secret, meta, ...(unowned ? { unowned } : {}) };
    },

    async preflight(config, { signal }) {
      signal?.throwIfAborted();
      const doing = `cannot write ${describe(config)}`;
      const s = session(config);
      // Credentials: a login that works, a token Vault knows.
      const self = await s.call('GET', 'auth/token/lookup-self', { what: doing, signal, accept: [403] });
      if (self.status === 403) {
        throw new SinkError(
          `${doing}: Vault does not accept ${s.describeAuth()} (${s.statusText(self)}): it is expired, revoked or for another Vault or namespace`,
        );
      }
      // The mount: a KV engine, version 2 (a version 1 engine has no versions, no check-and-set, no custom metadata).
      const mount = await s.call('GET', `sys/internal/ui/mounts/${config.mount.split('/').map(encodeURIComponent).join('/')}`, {
        what: doing,
        signal,
        accept: [403, 404],
      });
      if (mount.status === 403) {
        throw new SinkError(
          `${doing}: no secrets engine at ${config.mount}/ that this token can see${config.namespace ? ` in namespace ${config.namespace}` : ''} ` +
            `(${s.statusText(mount)}): enable one (vault secrets enable -path=${config.mount} kv-v2), or grant the token's policy access to ${dataPath(config)}`,
        );
      }
      if (mount.status === 200) {
        const info = (mount.body?.data ?? {}) as { type?: unknown; options?: { version?: unknown } | null };
        const version = info.options?.version;
        if (info.type !== 'kv' && info.type !== 'generic') {
          throw new SinkError(`${doing}: ${config.mount}/ is a ${String(info.type)} secrets engine, not KV version 2`);
        }
        if (String(version ?? '1') !== '2') {
          throw new SinkError(
            `${doing}: ${config.mount}/ is a KV version 1 engine, which has no versions, check-and-set or custom metadata; ` +
              `upgrade it (vault kv enable-versioning ${config.mount}/) or use a KV version 2 mount`,
          );
        }
      }
      // The destination: ours, missing, or adopted.
      const current = await readState(s, config, doing, signal);
      const reason = foreignReason(config, current);
      if (reason) throw new SinkError(`refusing to write ${describe(config)}: it ${reason}`);
      // Permission to write, as far as Vault tells without writing.
      const needs: Array<[string, string[]]> = [
        [dataPath(config), ['read', 'update', ...(current.kind === 'missing' ? ['create'] : [])]],
        [metadataPath(config), ['read', 'patch']],
      ];
      const granted = await capabilities(
        s,
        needs.map(([p]) => p),
        doing,
        signal,
      );
      if (!granted) return;
      const lacking = needs
        .map(([path, wanted]) => ({ path, missing: wanted.filter((c) => !allows(granted[path], c)), has: listed(granted[path]) }))
        .filter((n) => n.missing.length > 0);
      if (lacking.length > 0) {
        throw new SinkError(
          `${doing}: the token's policies lack ${lacking
            .map((l) => `${l.missing.map((c) => `"${c}"`).join(', ')} on ${l.path} (it has: ${l.has})`)
            .join(' and ')}; add them to the Vault policy of ${s.describeAuth()}`,
        );
      }
    },

    async close() {
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.all(open.map((s) => s.revokeLogin()));
    },
  };

  /**
   * The token's metadata, when the custom metadata speaks of the version read: written with it, or
   * with an earlier version whose key held the same value (another field was edited since).
   */
  async function storedMeta(
    s: VaultSession,
    config: VaultSinkConfig,
    doing: string,
    current: KvState,
    value: unknown,
    signal: AbortSignal | undefined,
  ): Promise<StoredTokenMeta> {
    const custom = current.custom;
    if (custom[CUSTOM_METADATA.managedBy] !== MANAGED_BY) return {};
    const written = Number(custom[CUSTOM_METADATA.dataVersion]);
    if (written === current.version) return parseMeta(custom);
    if (!Number.isSafeInteger(written) || written < 1 || written > current.version || typeof value !== 'string') return {};
    const then = await kv(s, config, doing, 'GET', 'data', 'read', { signal, accept: [404], searchParams: { version: String(written) } });
    const fields = (then.body?.data as { data?: Record<string, unknown> } | undefined)?.data;
    return then.status === 200 && fields?.[config.key] === value ? parseMeta(custom) : {};
  }

  /** The capabilities of the token on each path, or undefined when Vault will not say (no default policy). */
  async function capabilities(
    s: VaultSession,
    paths: string[],
    doing: string,
    signal: AbortSignal | undefined,
  ): Promise<Record<string, string[]> | undefined> {
    const answer = await s.call('POST', 'sys/capabilities-self', { what: doing, signal, json: { paths }, accept: [403] });
    if (answer.status === 403) {
      context.logger.warn(
        { paths },
        'Vault does not let this token look up its own capabilities (sys/capabilities-self, in the default policy); the write permission is not checked',
      );
      return undefined;
    }
    const data = (answer.body?.data ?? answer.body ?? {}) as Record<string, unknown>;
    return Object.fromEntries(
      paths.map((p) => {
        const caps = data[p] ?? answer.body?.[p];
        return [p, Array.isArray(caps) ? caps.filter((c): c is string => typeof c === 'string') : []];
      }),
    );
  }

  /** Why a 403 happened: the token itself, or the capability its policies lack on `path`. */
  async function capabilityHint(s: VaultSession, signal: AbortSignal | undefined, path: string, need: string): Promise<string> {
    let granted: Record<string, string[]> | undefined;
    try {
      granted = await capabilities(s, [path], '', signal);
    } catch (error) {
      if ((error as Error)?.name === 'AbortError') throw error;
    }
    if (!granted) return ` (the token is invalid or expired, or its policies lack "${need}" on ${path})`;
    return ` (the token's policies lack "${need}" on ${path}; it has: ${listed(granted[path])}; add "${need}" to the Vault policy of ${s.describeAuth()})`;
  }
}

/** Vault's capability list for a message: `deny` (what Vault says for none) as nothing. */
function listed(granted: string[] | undefined): string {
  const real = (granted ?? []).filter((c) => c !== 'deny');
  return real.length > 0 && !granted?.includes('deny') ? real.join(', ') : 'nothing';
}

/** Whether Vault's capability list allows `capability`. */
function allows(granted: string[] | undefined, capability: string): boolean {
  if (!granted || granted.includes('deny')) return false;
  return granted.includes('root') || granted.includes(capability);
}

function customMetadataOf(raw: unknown): Record<string, string> {
  if (!raw || typeof raw !== 'object') return {};
  return Object.fromEntries(Object.entries(raw as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** Why another writer's secret is not ours to write; undefined when it is ours, missing, or the policy adopts it. */
function foreignReason(config: VaultSinkConfig, current: KvState): string | undefined {
  if (current.kind === 'missing' || config.adopt) return undefined;
  const by = current.custom[CUSTOM_METADATA.managedBy];
  if (by === MANAGED_BY) return undefined;
  return (
    `exists and is not managed by token-rotator` +
    `${by ? ` (custom metadata ${CUSTOM_METADATA.managedBy}: ${by})` : ` (no ${CUSTOM_METADATA.managedBy} custom metadata)`}` +
    '; set adopt: true on the sink to take it over'
  );
}

/** Our custom metadata for a write of `meta`, but the data version (known once the data is written). */
function customMetadataFor(meta: TokenMeta): Record<string, string> {
  return {
    [CUSTOM_METADATA.managedBy]: MANAGED_BY,
    ...metadataValues(meta, CUSTOM_METADATA),
  };
}

/** The custom metadata is ours, says exactly `wanted`, and speaks of the current version. */
function describesCurrent(current: KvState, wanted: Record<string, string>): boolean {
  return (
    Object.entries(wanted).every(([k, v]) => current.custom[k] === v) &&
    current.custom[CUSTOM_METADATA.dataVersion] === String(current.version)
  );
}

const parseMeta = (custom: Record<string, string>): StoredTokenMeta => storedMetadata(custom, CUSTOM_METADATA);

function writeHint(answer: VaultAnswer): string {
  const errors = vaultErrors(answer.body).join(' ');
  if (errors.includes(CAS_MISMATCH)) return ' (the secret changed again while writing it; the next run tries again)';
  if (errors.includes('check-and-set parameter required'))
    return ' (the mount requires check-and-set, which this sink always sends: is this a KV version 2 engine?)';
  return '';
}

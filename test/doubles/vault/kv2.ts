/**
 * The KV version 2 secrets engine (hashicorp/vault-plugin-secrets-kv: path_data.go, path_metadata.go,
 * path_config.go), as its HTTP API answers: versions with check-and-set, soft delete and destroy,
 * max_versions trimming, per-secret metadata with custom_metadata and its limits, and a JSON merge
 * patch of the metadata. Handlers answer `{ status, body }` for the router to send.
 */

export interface KvVersion {
  /** The data as JSON text, as the engine stores it. */
  data: string;
  createdTime: string;
  deletionTime: string;
  destroyed: boolean;
}

export interface KvSecret {
  currentVersion: number;
  oldestVersion: number;
  createdTime: string;
  updatedTime: string;
  maxVersions: number;
  casRequired: boolean;
  /** null until set, as Go's nil map marshals. */
  customMetadata: Record<string, string> | null;
  versions: Map<number, KvVersion>;
}

export interface KvMountConfig {
  casRequired: boolean;
  /** 0: the engine's default, 10. */
  maxVersions: number;
}

export interface Answer {
  status: number;
  /** `data` of the envelope, or a whole body for errors (`errors`), or undefined for 204. */
  data?: unknown;
  errors?: string[];
  /** A 404 that still carries the version's metadata (a deleted or destroyed version). */
  dataWith404?: unknown;
  warnings?: string[];
  /** A login's `auth` block. */
  auth?: unknown;
}

const DEFAULT_MAX_VERSIONS = 10;
const MAX_CUSTOM_METADATA_KEYS = 64;
const MAX_CUSTOM_METADATA_KEY_LENGTH = 128;
const MAX_CUSTOM_METADATA_VALUE_LENGTH = 512;
const CUSTOM_METADATA_PREFIX = 'custom_metadata validation failed';

const error = (status: number, ...errors: string[]): Answer => ({ status, errors });
const notFound = (): Answer => ({ status: 404, errors: [] });

/** Go's strutil.Printable: no control characters. */
// eslint-disable-next-line no-control-regex
const printable = (s: string) => !/[\u0000-\u001f\u007f-\u009f]/.test(s);

export class KvEngine {
  readonly secrets = new Map<string, KvSecret>();
  readonly config: KvMountConfig = { casRequired: false, maxVersions: 0 };

  constructor(private readonly now: () => Date) {}

  exists(path: string): boolean {
    return this.secrets.has(path);
  }

  private stamp(): string {
    return this.now().toISOString();
  }

  private versionMetadata(secret: KvSecret, number: number, v: KvVersion) {
    return {
      version: number,
      created_time: v.createdTime,
      deletion_time: v.deletionTime,
      destroyed: v.destroyed,
      custom_metadata: secret.customMetadata,
    };
  }

  private deleted(v: KvVersion): boolean {
    return v.deletionTime !== '' && new Date(v.deletionTime).getTime() <= this.now().getTime();
  }

  readData(path: string, versionParam: number | undefined): Answer {
    const secret = this.secrets.get(path);
    if (!secret) return notFound();
    const number = versionParam && versionParam > 0 ? versionParam : secret.currentVersion;
    const v = secret.versions.get(number);
    if (!v) return notFound();
    const metadata = this.versionMetadata(secret, number, v);
    if (this.deleted(v) || v.destroyed) return { status: 404, dataWith404: { data: null, metadata } };
    return { status: 200, data: { data: JSON.parse(v.data) as unknown, metadata } };
  }

  /** POST/PUT data: `{data, options: {cas}}`. */
  writeData(path: string, body: Record<string, unknown>): Answer {
    if (path === '') return error(400, 'missing path');
    const data = body.data;
    if (data === undefined) return error(400, 'no data provided');
    if (!data || typeof data !== 'object' || Array.isArray(data))
      return error(
        400,
        `1 error occurred:\n\t* 'data' expected type 'map[string]interface {}', got unconvertible type '${goType(data)}'\n\n`,
      );
    const secret = this.secrets.get(path) ?? this.newSecret();
    const cas = this.checkAndSet(body.options, secret);
    if (cas) return cas;
    const created = this.addVersion(secret, JSON.stringify(data));
    this.secrets.set(path, secret);
    return { status: 200, data: { ...this.versionMetadata(secret, secret.currentVersion, created) } };
  }

  private newSecret(): KvSecret {
    return {
      currentVersion: 0,
      oldestVersion: 0,
      createdTime: '',
      updatedTime: '',
      maxVersions: 0,
      casRequired: false,
      customMetadata: null,
      versions: new Map(),
    };
  }

  private checkAndSet(options: unknown, secret: KvSecret): Answer | undefined {
    const raw = options && typeof options === 'object' ? (options as Record<string, unknown>).cas : undefined;
    if (raw !== undefined) {
      const cas = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : NaN;
      if (!Number.isInteger(cas)) return error(400, 'error parsing check-and-set parameter');
      if (cas !== secret.currentVersion) return error(400, 'check-and-set parameter did not match the current version');
    } else if (this.config.casRequired || secret.casRequired) {
      return error(400, 'check-and-set parameter required for this call');
    }
    return undefined;
  }

  /** KeyMetadata.AddVersion: the next number, and the oldest versions beyond max_versions dropped. */
  private addVersion(secret: KvSecret, data: string): KvVersion {
    const createdTime = this.stamp();
    const version: KvVersion = { data, createdTime, deletionTime: '', destroyed: false };
    secret.currentVersion++;
    secret.versions.set(secret.currentVersion, version);
    secret.updatedTime = createdTime;
    if (!secret.createdTime) secret.createdTime = createdTime;
    const max = Math.max(secret.maxVersions, this.config.maxVersions) || DEFAULT_MAX_VERSIONS;
    if (secret.currentVersion - secret.oldestVersion >= max) {
      const toDelete = secret.currentVersion - max;
      for (let i = secret.oldestVersion; i <= toDelete; i++) secret.versions.delete(i);
      secret.oldestVersion = toDelete + 1;
    }
    return version;
  }

  /** DELETE data: a soft delete of the latest version. */
  deleteLatest(path: string): Answer {
    const secret = this.secrets.get(path);
    const v = secret?.versions.get(secret.currentVersion);
    if (secret && v && !v.destroyed && !this.deleted(v)) {
      v.deletionTime = this.stamp();
      secret.updatedTime = v.deletionTime;
    }
    return { status: 204 };
  }

  destroyVersions(path: string, versions: number[]): Answer {
    const secret = this.secrets.get(path);
    for (const n of versions) {
      const v = secret?.versions.get(n);
      if (v) {
        v.destroyed = true;
        v.data = 'null';
      }
    }
    return { status: 204 };
  }

  readMetadata(path: string): Answer {
    const secret = this.secrets.get(path);
    if (!secret) return notFound();
    const versions = Object.fromEntries(
      [...secret.versions].map(([n, v]) => [
        String(n),
        { created_time: v.createdTime, deletion_time: v.deletionTime, destroyed: v.destroyed, deleted_by: null, created_by: null },
      ]),
    );
    return {
      status: 200,
      data: {
        versions,
        current_version: secret.currentVersion,
        oldest_version: secret.oldestVersion,
        created_time: secret.createdTime,
        updated_time: secret.updatedTime,
        max_versions: secret.maxVersions,
        cas_required: secret.casRequired,
        delete_version_after: '0s',
        custom_metadata: secret.customMetadata,
        last_updated_by: null,
      },
    };
  }

  /** POST/PUT metadata: sets what it names; custom_metadata replaces the whole map. */
  writeMetadata(path: string, body: Record<string, unknown>): Answer {
    if (path === '') return error(400, 'missing path');
    const { max_versions: max, cas_required: cas, custom_metadata: custom } = body;
    if (max === undefined && cas === undefined && custom === undefined) return { status: 204 };
    let customMap: Record<string, string> | undefined;
    if (custom !== undefined) {
      const parsed = parseCustomMetadata(custom, false);
      if (typeof parsed === 'string') return error(400, parsed);
      const invalid = validateCustomMetadata(parsed);
      if (invalid) return error(400, invalid);
      customMap = parsed;
    }
    const secret = this.secrets.get(path) ?? { ...this.newSecret(), createdTime: this.stamp(), updatedTime: this.stamp() };
    if (max !== undefined) secret.maxVersions = Number(max);
    if (cas !== undefined) secret.casRequired = asBool(cas);
    if (customMap) secret.customMetadata = customMap;
    this.secrets.set(path, secret);
    return { status: 204 };
  }

  /** PATCH metadata: a JSON merge patch of the patchable fields; the secret must exist. */
  patchMetadata(path: string, body: Record<string, unknown>): Answer {
    if (path === '') return error(400, 'missing path');
    const custom = body.custom_metadata;
    let patch: Record<string, string | null> | undefined;
    if (custom !== undefined && custom !== null) {
      if (typeof custom !== 'object' || Array.isArray(custom)) return error(400, `${CUSTOM_METADATA_PREFIX}: expected a map`);
      const kept = parseCustomMetadata(custom, true);
      if (typeof kept === 'string') return error(400, kept);
      const invalid = validateCustomMetadata(kept);
      if (invalid) return error(400, invalid);
      patch = Object.fromEntries(Object.entries(custom as Record<string, unknown>).map(([k, v]) => [k, v === null ? null : kept[k]!]));
    }
    const secret = this.secrets.get(path);
    if (!secret) return notFound();
    if (body.max_versions !== undefined) secret.maxVersions = Number(body.max_versions);
    if (body.cas_required !== undefined) secret.casRequired = asBool(body.cas_required);
    if (custom === null) secret.customMetadata = null;
    if (patch) {
      const merged = { ...(secret.customMetadata ?? {}) };
      for (const [k, v] of Object.entries(patch)) {
        if (v === null) delete merged[k];
        else merged[k] = v;
      }
      secret.customMetadata = merged;
    }
    return { status: 204 };
  }

  deleteMetadata(path: string): Answer {
    this.secrets.delete(path);
    return { status: 204 };
  }

  readConfig(): Answer {
    return {
      status: 200,
      data: { cas_required: this.config.casRequired, max_versions: this.config.maxVersions, delete_version_after: '0s' },
    };
  }

  writeConfig(body: Record<string, unknown>): Answer {
    if (body.cas_required !== undefined) this.config.casRequired = body.cas_required === true;
    if (body.max_versions !== undefined) this.config.maxVersions = Number(body.max_versions);
    return { status: 204 };
  }

  /** For tests, without API rules: writes a version as `vault kv put` would (no check-and-set). */
  put(path: string, data: Record<string, unknown>): number {
    const secret = this.secrets.get(path) ?? this.newSecret();
    this.addVersion(secret, JSON.stringify(data));
    this.secrets.set(path, secret);
    return secret.currentVersion;
  }
}

/** mapstructure.WeakDecode of each value into a string; nulls dropped for a patch. */
function parseCustomMetadata(raw: unknown, filterNils: boolean): Record<string, string> | string {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return `${CUSTOM_METADATA_PREFIX}: expected a map`;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
    if (v === null) {
      if (!filterNils) out[k] = '';
      continue;
    }
    if (typeof v === 'string') out[k] = v;
    else if (typeof v === 'number' || typeof v === 'boolean') out[k] = typeof v === 'boolean' ? (v ? '1' : '0') : String(v);
    else return `${CUSTOM_METADATA_PREFIX}: '' expected type 'string', got unconvertible type '${goType(v)}'`;
  }
  return out;
}

/** validateCustomMetadata, with Vault's texts (a multierror: "N errors occurred"). */
function validateCustomMetadata(custom: Record<string, string>): string | undefined {
  const keys = Object.keys(custom);
  const errors: string[] = [];
  if (keys.length > MAX_CUSTOM_METADATA_KEYS) {
    errors.push(`${CUSTOM_METADATA_PREFIX}: payload must contain at most ${MAX_CUSTOM_METADATA_KEYS} keys, provided ${keys.length}`);
  } else {
    for (const key of keys) {
      const value = custom[key]!;
      const keyLength = Buffer.byteLength(key);
      const valueLength = Buffer.byteLength(value);
      if (keyLength === 0 || keyLength > MAX_CUSTOM_METADATA_KEY_LENGTH) {
        errors.push(
          `${CUSTOM_METADATA_PREFIX}: length of key ${JSON.stringify(key)} is ${keyLength} but must be 0 < len(key) <= ${MAX_CUSTOM_METADATA_KEY_LENGTH}`,
        );
      }
      if (valueLength === 0 || valueLength > MAX_CUSTOM_METADATA_VALUE_LENGTH) {
        errors.push(
          `${CUSTOM_METADATA_PREFIX}: length of value for key ${JSON.stringify(key)} is ${valueLength} but must be 0 < len(value) <= ${MAX_CUSTOM_METADATA_VALUE_LENGTH}`,
        );
      }
      if (!printable(key)) errors.push(`${CUSTOM_METADATA_PREFIX}: key ${JSON.stringify(key)} (${key}) contains unprintable characters`);
      if (!printable(value)) errors.push(`${CUSTOM_METADATA_PREFIX}: value for key ${JSON.stringify(key)} contains unprintable characters`);
    }
  }
  if (errors.length === 0) return undefined;
  const noun = errors.length === 1 ? '1 error occurred' : `${errors.length} errors occurred`;
  return `${noun}:\n${errors.map((e) => `\t* ${e}`).join('\n')}\n\n`;
}

function goType(value: unknown): string {
  if (Array.isArray(value)) return '[]interface {}';
  if (value === null) return '<nil>';
  return typeof value === 'object' ? 'map[string]interface {}' : typeof value === 'number' ? 'float64' : typeof value;
}

/** Vault reads bool fields with mapstructure's weak decoding: `true` and `"true"` alike, on every path. */
function asBool(value: unknown): boolean {
  return value === true || value === 'true';
}

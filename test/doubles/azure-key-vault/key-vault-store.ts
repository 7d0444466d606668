import { randomBytes } from 'node:crypto';

/**
 * What one vault holds, as Key Vault keeps it: secrets by name (compared without case), each a list
 * of versions (32 hex characters, newest last: the newest is the "latest" a GET without a version
 * gives), with per-version value, content type, tags and attributes; and soft-deleted secrets,
 * whose names cannot be reused until recovered or purged.
 */

export interface StoredVersion {
  version: string;
  value: string;
  contentType?: string;
  tags?: Record<string, string>;
  enabled: boolean;
  /** Unix seconds, as on the wire. */
  nbf?: number;
  exp?: number;
  created: number;
  updated: number;
}

export interface StoredSecret {
  /** The name as first written: ids carry it, lookups ignore its case. */
  name: string;
  versions: StoredVersion[];
}

export interface DeletedSecret {
  secret: StoredSecret;
  deletedDate: number;
  scheduledPurgeDate: number;
}

export type PermissionModel = 'rbac' | 'accessPolicy';

/** The data actions of Azure RBAC for secrets, which access policies group as get, list, set, delete, recover, purge. */
export type SecretDataAction = 'getSecret' | 'readMetadata' | 'setSecret' | 'update' | 'delete' | 'recover' | 'purge';

export const RBAC_ACTION: Record<SecretDataAction, string> = {
  getSecret: 'Microsoft.KeyVault/vaults/secrets/getSecret/action',
  readMetadata: 'Microsoft.KeyVault/vaults/secrets/readMetadata/action',
  setSecret: 'Microsoft.KeyVault/vaults/secrets/setSecret/action',
  update: 'Microsoft.KeyVault/vaults/secrets/update/action',
  delete: 'Microsoft.KeyVault/vaults/secrets/delete',
  recover: 'Microsoft.KeyVault/vaults/secrets/recover/action',
  purge: 'Microsoft.KeyVault/vaults/secrets/purge/action',
};

/** Microsoft's mapping of access-policy permissions to RBAC data actions (Secret Set covers setSecret and update). */
export const ACCESS_POLICY_PERMISSION: Record<SecretDataAction, string> = {
  getSecret: 'get',
  readMetadata: 'list',
  setSecret: 'set',
  update: 'set',
  delete: 'delete',
  recover: 'recover',
  purge: 'purge',
};

export interface Denial {
  action: SecretDataAction;
  /** The principal's object id; every principal when absent. */
  objectId?: string;
  /** One secret (any case); every secret when absent. RBAC can be scoped to a secret, access policies cannot. */
  secret?: string;
}

export const RETENTION_DAYS = 90;

export class VaultState {
  readonly secrets = new Map<string, StoredSecret>();
  readonly deleted = new Map<string, DeletedSecret>();
  readonly denials: Denial[] = [];
  /** While set, every request is answered 503 ServiceUnavailable (which the SDK retries, then gives up). */
  outage = false;
  /**
   * How many of the next PUTs are committed and then answered by a dropped connection (a response
   * lost on the way back, a gateway timeout after the write): the case a blind retry duplicates.
   */
  dropAfterCommit = 0;

  constructor(
    readonly name: string,
    readonly tenantId: string,
    readonly permissionModel: PermissionModel,
    readonly softDelete: boolean,
    readonly location: string,
  ) {}

  get recoveryLevel(): string {
    return this.softDelete ? 'Recoverable+Purgeable' : 'Purgeable';
  }

  secret(name: string): StoredSecret | undefined {
    return this.secrets.get(name.toLowerCase());
  }

  deletedSecret(name: string): DeletedSecret | undefined {
    return this.deleted.get(name.toLowerCase());
  }

  /** A new version, the latest from now on. */
  addVersion(name: string, version: Omit<StoredVersion, 'version' | 'created' | 'updated'>, now: number): StoredVersion {
    const key = name.toLowerCase();
    const secret = this.secrets.get(key) ?? { name, versions: [] };
    const stored: StoredVersion = { ...version, version: randomBytes(16).toString('hex'), created: now, updated: now };
    secret.versions.push(stored);
    this.secrets.set(key, secret);
    return stored;
  }

  isDenied(action: SecretDataAction, objectId: string, secret: string | undefined): boolean {
    return this.denials.some(
      (d) =>
        d.action === action &&
        (d.objectId === undefined || d.objectId === objectId) &&
        (d.secret === undefined || (secret !== undefined && d.secret.toLowerCase() === secret.toLowerCase())),
    );
  }
}

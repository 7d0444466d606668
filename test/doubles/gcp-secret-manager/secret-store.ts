import { randomBytes } from 'node:crypto';

import { status } from '@grpc/grpc-js';

import type { Iam } from './iam.js';
import { failedPrecondition, invalid, notFound, permissionDenied, RpcError, serviceDisabled } from './rpc-error.js';
import { aliasProblem, annotationProblem, crc32cBitwise, KNOWN_LOCATIONS, labelProblem, MAX_PAYLOAD_BYTES, SECRET_ID } from './rules.js';

export type VersionState = 'ENABLED' | 'DISABLED' | 'DESTROYED';
export type Replication = { automatic: Record<string, never> } | { userManaged: { replicas: { location: string }[] } };

export interface Project {
  id: string;
  number: string;
  secretManagerEnabled: boolean;
  resourceManagerEnabled: boolean;
}

export interface StoredVersion {
  number: number;
  createTime: number;
  state: VersionState;
  /** Gone once destroyed. */
  data: Buffer | undefined;
  crc32c: number;
  clientSpecifiedPayloadChecksum: boolean;
  etag: string;
  destroyTime?: number;
}

export interface StoredSecret {
  project: Project;
  id: string;
  createTime: number;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  replication: Replication;
  versionAliases: Record<string, number>;
  etag: string;
  versions: StoredVersion[];
}

/** Protobuf Timestamp, int64 seconds as text (the loader's `longs: String`). */
const timestamp = (ms: number) => ({ seconds: String(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1_000_000 });
const newEtag = () => `"${randomBytes(7).toString('hex')}"`;

/** Each call's permission, as the REST reference lists it under "Authorization requires". */
export const PERMISSIONS = {
  GetSecret: 'secretmanager.secrets.get',
  CreateSecret: 'secretmanager.secrets.create',
  UpdateSecret: 'secretmanager.secrets.update',
  DeleteSecret: 'secretmanager.secrets.delete',
  AddSecretVersion: 'secretmanager.versions.add',
  AccessSecretVersion: 'secretmanager.versions.access',
  GetSecretVersion: 'secretmanager.versions.get',
  ListSecretVersions: 'secretmanager.versions.list',
  DisableSecretVersion: 'secretmanager.versions.disable',
  EnableSecretVersion: 'secretmanager.versions.enable',
  DestroySecretVersion: 'secretmanager.versions.destroy',
} as const;

/** UpdateSecret's update_mask paths that the double applies; the rest of the mutable fields are refused as unimplemented. */
const UPDATABLE = new Set(['labels', 'annotations', 'version_aliases']);
const MUTABLE_ELSEWHERE = new Set(['topics', 'expire_time', 'ttl', 'rotation', 'version_destroy_ttl', 'customer_managed_encryption']);

interface SecretRef {
  /** The name as the request spelled it: what a denial quotes. */
  asSent: string;
  project: Project | undefined;
  projectRef: string;
  secretId: string;
}

/**
 * Secrets and their versions, per project, with Secret Manager's rules: resource names in
 * projects/{id or number}/secrets/{id}[/versions/{n|latest|alias}] answered with project numbers,
 * versions numbered from 1 and never reused, `latest` as the most recently created version (a
 * disabled or destroyed one included, which then cannot be accessed), the documented label and
 * annotation rules, CRC32C on the way in and out, update masks, etags, IAM on every call.
 */
export class SecretStore {
  readonly projects = new Map<string, Project>();
  readonly #secrets = new Map<string, StoredSecret>();

  constructor(private readonly iam: Iam) {}

  addProject(id: string, number: string, options: { secretManagerEnabled?: boolean; resourceManagerEnabled?: boolean } = {}): Project {
    const project: Project = {
      id,
      number,
      secretManagerEnabled: options.secretManagerEnabled ?? true,
      resourceManagerEnabled: options.resourceManagerEnabled ?? true,
    };
    this.projects.set(id, project);
    this.projects.set(number, project);
    return project;
  }

  project(ref: string): Project | undefined {
    return this.projects.get(ref);
  }

  /** The stored secret, for tests to inspect (the live object: do not change it behind the API's back unless meaning to). */
  secret(projectRef: string, secretId: string): StoredSecret | undefined {
    const project = this.project(projectRef);
    return project ? this.#secrets.get(this.#key(project, secretId)) : undefined;
  }

  /** Canonical resource names with project numbers, from the project down: what IAM is asked about. */
  static chain(project: Project, secretId?: string): string[] {
    const top = `projects/${project.number}`;
    return secretId === undefined ? [top] : [top, `${top}/secrets/${secretId}`];
  }

  // ---- the calls -------------------------------------------------------------------------------

  getSecret(member: string, request: { name?: string }) {
    const ref = this.#secretRef(request.name, 'name');
    this.#authorize(member, ref, PERMISSIONS.GetSecret, ref.asSent);
    return this.#view(this.#existing(ref));
  }

  createSecret(member: string, request: { parent?: string; secretId?: string; secret?: Record<string, unknown> }) {
    const parent = request.parent ?? '';
    const match = /^projects\/([^/]+)$/.exec(parent);
    if (!match) throw invalid(`Invalid resource field value in the request.`, 'parent');
    const project = this.project(match[1]!);
    this.#authorize(member, { asSent: parent, project, projectRef: match[1]!, secretId: '' }, PERMISSIONS.CreateSecret, parent, true);
    const secretId = request.secretId ?? '';
    if (!SECRET_ID.test(secretId)) throw invalid(`Secret ID [${secretId}] violates format constraints: [a-zA-Z0-9_-]{1,255}.`, 'secret_id');
    const body = request.secret;
    if (!body) throw invalid('Secret is required.', 'secret');
    const replication = replicationOf(body['replication']);
    const labels = (body['labels'] as Record<string, string> | undefined) ?? {};
    const annotations = (body['annotations'] as Record<string, string> | undefined) ?? {};
    const aliases = (body['versionAliases'] as Record<string, string> | undefined) ?? {};
    checkMetadata(labels, annotations, aliases);
    if (Object.keys(aliases).length > 0)
      throw invalid('Version aliases cannot name versions of a secret being created.', 'secret.version_aliases');
    const key = this.#key(project!, secretId);
    if (this.#secrets.has(key))
      throw new RpcError(status.ALREADY_EXISTS, `Secret [projects/${project!.number}/secrets/${secretId}] already exists.`);
    const stored: StoredSecret = {
      project: project!,
      id: secretId,
      createTime: Date.now(),
      labels: { ...labels },
      annotations: { ...annotations },
      replication,
      versionAliases: {},
      etag: newEtag(),
      versions: [],
    };
    this.#secrets.set(key, stored);
    return this.#view(stored);
  }

  updateSecret(member: string, request: { secret?: Record<string, unknown>; updateMask?: { paths?: string[] } }) {
    const body = request.secret;
    if (!body) throw invalid('Secret is required.', 'secret');
    const ref = this.#secretRef(body['name'] as string | undefined, 'secret.name');
    this.#authorize(member, ref, PERMISSIONS.UpdateSecret, ref.asSent);
    const stored = this.#existing(ref);
    const paths = request.updateMask?.paths ?? [];
    if (paths.length === 0) throw invalid('update_mask is required and must name at least one field.', 'update_mask');
    for (const path of paths) {
      if (UPDATABLE.has(path)) continue;
      if (MUTABLE_ELSEWHERE.has(path)) throw new RpcError(status.UNIMPLEMENTED, `The double does not update ${path}.`);
      throw invalid(`Invalid update_mask path: ${path} is not a field that can be updated.`, 'update_mask');
    }
    const etag = body['etag'] as string | undefined;
    if (etag && etag !== stored.etag)
      throw failedPrecondition('The etag provided in the request does not match the current etag of the secret.');
    const labels = paths.includes('labels') ? ((body['labels'] as Record<string, string> | undefined) ?? {}) : stored.labels;
    const annotations = paths.includes('annotations')
      ? ((body['annotations'] as Record<string, string> | undefined) ?? {})
      : stored.annotations;
    const aliases = paths.includes('version_aliases')
      ? ((body['versionAliases'] as Record<string, string> | undefined) ?? {})
      : Object.fromEntries(Object.entries(stored.versionAliases).map(([k, v]) => [k, String(v)]));
    checkMetadata(labels, annotations, aliases);
    for (const [alias, version] of Object.entries(aliases))
      if (!stored.versions.some((v) => v.number === Number(version) && v.state !== 'DESTROYED'))
        throw invalid(`Version alias '${alias}' names a version that does not exist or is destroyed.`, 'secret.version_aliases');
    stored.labels = { ...labels };
    stored.annotations = { ...annotations };
    stored.versionAliases = Object.fromEntries(Object.entries(aliases).map(([k, v]) => [k, Number(v)]));
    stored.etag = newEtag();
    return this.#view(stored);
  }

  deleteSecret(member: string, request: { name?: string; etag?: string }) {
    const ref = this.#secretRef(request.name, 'name');
    this.#authorize(member, ref, PERMISSIONS.DeleteSecret, ref.asSent);
    const stored = this.#existing(ref);
    if (request.etag && request.etag !== stored.etag)
      throw failedPrecondition('The etag provided in the request does not match the current etag of the secret.');
    this.#secrets.delete(this.#key(stored.project, stored.id));
    this.iam.forget(SecretStore.chain(stored.project, stored.id)[1]!);
    return {};
  }

  addSecretVersion(member: string, request: { parent?: string; payload?: { data?: Buffer; dataCrc32c?: string } }) {
    const ref = this.#secretRef(request.parent, 'parent');
    this.#authorize(member, ref, PERMISSIONS.AddSecretVersion, ref.asSent);
    const stored = this.#existing(ref);
    if (!request.payload) throw invalid('Payload is required.', 'payload');
    const data = Buffer.from(request.payload.data ?? Buffer.alloc(0));
    if (data.length > MAX_PAYLOAD_BYTES)
      throw invalid(`Secret payload data length must be less than ${MAX_PAYLOAD_BYTES} bytes.`, 'payload.data');
    const crc = crc32cBitwise(data);
    const sent = request.payload.dataCrc32c;
    if (sent !== undefined && BigInt(sent) !== BigInt(crc))
      throw invalid('Checksum mismatch: the data_crc32c provided does not match the CRC32C of the payload data.', 'payload.data_crc32c');
    const version: StoredVersion = {
      number: stored.versions.length + 1,
      createTime: Date.now(),
      state: 'ENABLED',
      data,
      crc32c: crc,
      clientSpecifiedPayloadChecksum: sent !== undefined,
      etag: newEtag(),
    };
    stored.versions.push(version);
    return this.#versionView(stored, version);
  }

  accessSecretVersion(member: string, request: { name?: string }) {
    const { ref, version: id } = this.#versionRef(request.name);
    this.#authorize(member, ref, PERMISSIONS.AccessSecretVersion, request.name!);
    const stored = this.#secrets.get(ref.project ? this.#key(ref.project, ref.secretId) : '');
    const canonical = `projects/${ref.project?.number ?? ref.projectRef}/secrets/${ref.secretId}`;
    if (!stored || (id === 'latest' && stored.versions.length === 0)) throw notFound(`Secret [${canonical}] not found or has no versions.`);
    const version = this.#resolve(stored, id);
    if (version.state !== 'ENABLED')
      throw failedPrecondition(`Secret Version [${canonical}/versions/${version.number}] is in ${version.state} state.`);
    return {
      name: `${canonical}/versions/${version.number}`,
      payload: { data: version.data, dataCrc32c: String(version.crc32c) },
    };
  }

  getSecretVersion(member: string, request: { name?: string }) {
    const { ref, version: id } = this.#versionRef(request.name);
    this.#authorize(member, ref, PERMISSIONS.GetSecretVersion, request.name!);
    const stored = this.#existing(ref);
    return this.#versionView(stored, this.#resolve(stored, id));
  }

  listSecretVersions(member: string, request: { parent?: string; pageSize?: number; pageToken?: string; filter?: string }) {
    const ref = this.#secretRef(request.parent, 'parent');
    this.#authorize(member, ref, PERMISSIONS.ListSecretVersions, ref.asSent);
    const stored = this.#existing(ref);
    let versions = [...stored.versions].reverse();
    if (request.filter) {
      const state = /^state\s*[:=]\s*(ENABLED|DISABLED|DESTROYED)$/.exec(request.filter.trim())?.[1];
      if (!state) throw new RpcError(status.UNIMPLEMENTED, 'The double filters versions by state:ENABLED|DISABLED|DESTROYED only.');
      versions = versions.filter((v) => v.state === state);
    }
    const start = request.pageToken ? Number(Buffer.from(request.pageToken, 'base64url').toString('utf8')) : 0;
    if (!Number.isSafeInteger(start) || start < 0) throw invalid('Invalid page token.', 'page_token');
    const size = Math.min(request.pageSize && request.pageSize > 0 ? request.pageSize : 25000, 25000);
    const page = versions.slice(start, start + size);
    const next = start + size < versions.length ? Buffer.from(String(start + size)).toString('base64url') : '';
    return { versions: page.map((v) => this.#versionView(stored, v)), nextPageToken: next, totalSize: versions.length };
  }

  setVersionState(
    member: string,
    method: 'DisableSecretVersion' | 'EnableSecretVersion' | 'DestroySecretVersion',
    request: { name?: string; etag?: string },
  ) {
    const { ref, version: id } = this.#versionRef(request.name);
    this.#authorize(member, ref, PERMISSIONS[method], request.name!);
    const stored = this.#existing(ref);
    const version = this.#resolve(stored, id);
    if (request.etag && request.etag !== version.etag)
      throw failedPrecondition('The etag provided in the request does not match the current etag of the secret version.');
    const name = `projects/${stored.project.number}/secrets/${stored.id}/versions/${version.number}`;
    if (version.state === 'DESTROYED') throw failedPrecondition(`Secret Version [${name}] is in DESTROYED state.`);
    if (method === 'DestroySecretVersion') {
      version.state = 'DESTROYED';
      version.data = undefined;
      version.destroyTime = Date.now();
      for (const [alias, n] of Object.entries(stored.versionAliases)) if (n === version.number) delete stored.versionAliases[alias];
    } else version.state = method === 'EnableSecretVersion' ? 'ENABLED' : 'DISABLED';
    version.etag = newEtag();
    return this.#versionView(stored, version);
  }

  /** Which of the permissions the member holds on the secret; needs no permission of its own. */
  testIamPermissions(member: string, request: { resource?: string; permissions?: string[] }) {
    const ref = this.#secretRef(request.resource, 'resource');
    if (ref.project && !ref.project.secretManagerEnabled)
      throw serviceDisabled('secretmanager.googleapis.com', 'Secret Manager API', ref.project.number);
    const stored = this.#existing(ref);
    const chain = SecretStore.chain(stored.project, stored.id);
    return { permissions: (request.permissions ?? []).filter((permission) => this.iam.allows(member, chain, permission)) };
  }

  /** Cloud Resource Manager's projects.testIamPermissions: the member's permissions on the project itself. */
  testProjectPermissions(member: string, request: { resource?: string; permissions?: string[] }) {
    const ref = /^projects\/([^/]+)$/.exec(request.resource ?? '')?.[1];
    if (!ref) throw invalid('Invalid resource field value in the request.', 'resource');
    const project = this.project(ref);
    if (!project) throw permissionDenied('resourcemanager.projects.get', `projects/${ref}`, 'cloudresourcemanager.googleapis.com');
    if (!project.resourceManagerEnabled)
      throw serviceDisabled('cloudresourcemanager.googleapis.com', 'Cloud Resource Manager API', project.number);
    const chain = SecretStore.chain(project);
    return { permissions: (request.permissions ?? []).filter((permission) => this.iam.allows(member, chain, permission)) };
  }

  // ---- helpers ---------------------------------------------------------------------------------

  #key(project: Project, secretId: string): string {
    return `${project.number}/${secretId}`;
  }

  #secretRef(name: string | undefined, field: string): SecretRef {
    const match = /^projects\/([^/]+)\/secrets\/([^/]+)$/.exec(name ?? '');
    if (!match) throw invalid('Invalid resource field value in the request.', field);
    return { asSent: name!, project: this.project(match[1]!), projectRef: match[1]!, secretId: match[2]! };
  }

  #versionRef(name: string | undefined): { ref: SecretRef; version: string } {
    const match = /^(projects\/[^/]+\/secrets\/[^/]+)\/versions\/([^/]+)$/.exec(name ?? '');
    if (!match) throw invalid('Invalid resource field value in the request.', 'name');
    return { ref: this.#secretRef(match[1], 'name'), version: match[2]! };
  }

  /** Service enabled, then IAM: a denial quotes the resource as sent and says nothing of whether it exists. */
  #authorize(member: string, ref: SecretRef, permission: string, resource: string, onProject = false): void {
    if (ref.project && !ref.project.secretManagerEnabled)
      throw serviceDisabled('secretmanager.googleapis.com', 'Secret Manager API', ref.project.number);
    const chain = ref.project ? SecretStore.chain(ref.project, onProject ? undefined : ref.secretId) : [];
    if (!this.iam.allows(member, chain, permission)) throw permissionDenied(permission, resource);
  }

  #existing(ref: SecretRef): StoredSecret {
    const stored = ref.project ? this.#secrets.get(this.#key(ref.project, ref.secretId)) : undefined;
    if (!stored) throw notFound(`Secret [projects/${ref.project?.number ?? ref.projectRef}/secrets/${ref.secretId}] not found.`);
    return stored;
  }

  /** A version id: a number, `latest` (the newest version, whatever its state), or an alias. */
  #resolve(stored: StoredSecret, id: string): StoredVersion {
    const name = `projects/${stored.project.number}/secrets/${stored.id}/versions/${id}`;
    const number = id === 'latest' ? stored.versions.length : /^\d+$/.test(id) ? Number(id) : stored.versionAliases[id];
    const version = number === undefined ? undefined : stored.versions[number - 1];
    if (!version) throw notFound(`Secret Version [${name}] not found.`);
    return version;
  }

  #view(stored: StoredSecret) {
    return {
      name: `projects/${stored.project.number}/secrets/${stored.id}`,
      replication: stored.replication,
      createTime: timestamp(stored.createTime),
      labels: stored.labels,
      annotations: stored.annotations,
      etag: stored.etag,
      versionAliases: Object.fromEntries(Object.entries(stored.versionAliases).map(([k, v]) => [k, String(v)])),
    };
  }

  #versionView(stored: StoredSecret, version: StoredVersion) {
    return {
      name: `projects/${stored.project.number}/secrets/${stored.id}/versions/${version.number}`,
      createTime: timestamp(version.createTime),
      ...(version.destroyTime ? { destroyTime: timestamp(version.destroyTime) } : {}),
      state: version.state,
      etag: version.etag,
      clientSpecifiedPayloadChecksum: version.clientSpecifiedPayloadChecksum,
      replicationStatus:
        'automatic' in stored.replication
          ? { automatic: {} }
          : { userManaged: { replicas: stored.replication.userManaged.replicas.map(({ location }) => ({ location })) } },
    };
  }
}

/** A CreateSecret's replication: required for a global secret, user-managed with known, distinct locations. */
function replicationOf(raw: unknown): Replication {
  const replication = raw as { automatic?: unknown; userManaged?: { replicas?: { location?: string }[] } } | undefined;
  if (replication?.automatic) return { automatic: {} };
  if (replication?.userManaged) {
    const locations = (replication.userManaged.replicas ?? []).map((replica) => replica.location ?? '');
    if (locations.length === 0)
      throw invalid('Replication.UserManaged.replicas cannot be empty.', 'secret.replication.user_managed.replicas');
    for (const location of locations)
      if (!KNOWN_LOCATIONS.has(location))
        throw invalid(`Location '${location}' is not a valid location.`, 'secret.replication.user_managed.replicas');
    if (new Set(locations).size !== locations.length)
      throw invalid('Replication.UserManaged.replicas names a location twice.', 'secret.replication.user_managed.replicas');
    return { userManaged: { replicas: locations.map((location) => ({ location })) } };
  }
  throw invalid('Secret.replication is required.', 'secret.replication');
}

function checkMetadata(labels: Record<string, string>, annotations: Record<string, string>, aliases: Record<string, unknown>): void {
  const labelIssue = labelProblem(labels);
  if (labelIssue) throw invalid(labelIssue, 'secret.labels');
  const annotationIssue = annotationProblem(annotations);
  if (annotationIssue) throw invalid(annotationIssue, 'secret.annotations');
  const aliasIssue = aliasProblem(aliases);
  if (aliasIssue) throw invalid(aliasIssue, 'secret.version_aliases');
}

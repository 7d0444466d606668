import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

import { parse as parseYaml } from 'yaml';

import { type AccessRules, authorize, authorizeCreateOnWrite } from './access-rules.js';
import { type ApiPath, parseApiPath } from './api-paths.js';
import type { Clock } from './clock.js';
import {
  aggregatedContentType,
  aggregatedDiscovery,
  aggregatedVersionAccepted,
  legacyCoreVersions,
  legacyGroup,
  legacyGroupList,
  legacyResourceList,
  SERVER_VERSION,
} from './discovery.js';
import { isJsonObject, type JsonObject, type JsonValue, stringAt } from './json.js';
import { strategyFor } from './kinds/index.js';
import type { ObjectStore } from './object-store.js';
import { groupVersionDocument, openApiRoot } from './openapi.js';
import { patchObject } from './patch-verb.js';
import { decodeProtobufObject, PROTOBUF_MEDIA_TYPE } from './protobuf/secret-message.js';
import { ProtobufError } from './protobuf/wire.js';
import { listedName } from './rbac.js';
import type { FieldValidation, Registry, WriteOptions } from './registry.js';
import type { RecordedKubeRequest } from './request-log.js';
import { apiVersionOf, type ResourceType } from './resource-types.js';
import {
  badRequest,
  internalError,
  invalid,
  KubeStatusError,
  methodNotAllowed,
  pathNotFound,
  unauthorized,
  unsupportedMediaType,
} from './status-error.js';
import { TABLE_CONTENT_TYPE, toTable, wantsTable } from './table.js';

/** The API server's default MaxRequestBodyBytes. */
const MAX_BODY_BYTES = 3 * 1024 * 1024;
const FIELD_MANAGER_MAX_LENGTH = 128;

interface Answer {
  status: number;
  body: JsonValue | string;
  contentType?: string;
  warnings?: string[];
}

export interface ApiHandlerOptions {
  token: string;
  registry: Registry;
  store: ObjectStore;
  clock: Clock;
  requests: RecordedKubeRequest[];
  /** What the bearer's user may do; read at each request, so a test may change it between calls. */
  access: () => AccessRules;
  /** The user the bearer token authenticates as, for Forbidden messages. */
  user: string;
  /** host:port, for /api's serverAddressByClientCIDRs. */
  serverAddress: () => string;
}

/** The HTTP side of the double: authentication, routing, content negotiation, the request log. */
export function createApiHandler(options: ApiHandlerOptions): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const expectedToken = Buffer.from(options.token);

  function authenticated(req: IncomingMessage): boolean {
    const match = /^bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!match) return false;
    const given = Buffer.from(match[1]!);
    return given.length === expectedToken.length && timingSafeEqual(given, expectedToken);
  }

  return async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://double.invalid');
    const method = req.method ?? 'GET';
    const contentType = req.headers['content-type'];
    const fieldManager = url.searchParams.get('fieldManager') ?? undefined;
    const record: RecordedKubeRequest = {
      method,
      verb: requestVerb(method, url),
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      ...(contentType ? { contentType } : {}),
      ...(fieldManager !== undefined ? { fieldManager } : {}),
      status: 0,
    };
    let answer: Answer;
    try {
      if (!authenticated(req)) throw unauthorized();
      answer = await route(req, url, method);
    } catch (error) {
      const status = error instanceof KubeStatusError ? error : internalError(error instanceof Error ? error.message : String(error));
      answer = { status: status.code, body: status.toStatus() };
    }
    record.status = answer.status;
    options.requests.push(record);
    const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
    res.writeHead(answer.status, {
      'content-type': answer.contentType ?? 'application/json',
      'content-length': Buffer.byteLength(text),
      'cache-control': 'no-cache, private',
      ...(answer.warnings?.length ? { warning: answer.warnings.map((w) => `299 - ${JSON.stringify(w)}`).join(', ') } : {}),
    });
    res.end(text);
  };

  async function route(req: IncomingMessage, url: URL, method: string): Promise<Answer> {
    const path = parseApiPath(url.pathname);
    if (path.kind === 'collection' || path.kind === 'object') return resourceRequest(req, url, method, path);
    // Drain any body, then answer the read-only documents.
    await readBody(req);
    if (method !== 'GET') throw path.kind === 'unknown' ? pathNotFound() : methodNotAllowed();
    return documentRequest(req, path);
  }

  function documentRequest(req: IncomingMessage, path: ApiPath): Answer {
    const json = (body: JsonValue | undefined): Answer => {
      if (body === undefined) throw pathNotFound();
      return { status: 200, body };
    };
    const aggregated = aggregatedVersionAccepted(req.headers.accept);
    switch (path.kind) {
      case 'version':
        return json(SERVER_VERSION);
      case 'health':
        return { status: 200, body: 'ok', contentType: 'text/plain; charset=utf-8' };
      case 'core-versions':
        return aggregated
          ? { status: 200, body: aggregatedDiscovery(true, aggregated), contentType: aggregatedContentType(aggregated) }
          : json(legacyCoreVersions(options.serverAddress()));
      case 'group-list':
        return aggregated
          ? { status: 200, body: aggregatedDiscovery(false, aggregated), contentType: aggregatedContentType(aggregated) }
          : json(legacyGroupList());
      case 'group':
        return json(legacyGroup(path.group));
      case 'resource-list':
        return json(legacyResourceList(path.group, path.version));
      case 'openapi-root':
        return json(openApiRoot());
      case 'openapi-document':
        return json(groupVersionDocument(path.group, path.version));
      default:
        throw pathNotFound();
    }
  }

  async function resourceRequest(
    req: IncomingMessage,
    url: URL,
    method: string,
    path: ApiPath & { kind: 'collection' | 'object' },
  ): Promise<Answer> {
    const { type } = path;
    const verb = verbOf(method, path.kind, url);
    if (verb) {
      try {
        authorize(options.access(), options.user, {
          verb,
          type,
          namespace: path.namespace,
          // A list by one name (a field selector) is authorized as about that name, as RequestInfo does.
          name: path.kind === 'object' ? path.name : verb === 'list' ? listedName(url.searchParams.get('fieldSelector')) : '',
        });
      } catch (error) {
        await readBody(req);
        throw error;
      }
    }
    // A namespaced kind's cluster-wide collection is only there to be listed.
    const crossNamespace = path.kind === 'collection' && type.namespaced && path.namespace === undefined;
    if (!verb || !type.verbs.includes(verb) || (crossNamespace && verb !== 'list')) {
      await readBody(req);
      throw methodNotAllowed();
    }
    const target = { type, ...(path.namespace !== undefined ? { namespace: path.namespace } : {}) };
    // get, update, patch and delete are only ever verbs of an object path.
    const named = { ...target, name: path.kind === 'object' ? path.name : '' };
    const query = url.searchParams;
    // A PUT or an apply that creates needs create as well as the verb the filter authorized.
    const authorizeCreate = () => authorizeCreateOnWrite(options.access(), options.user, named);
    switch (verb) {
      case 'get': {
        const object = options.registry.get(named);
        return readAnswer(req, type, [object], query, false);
      }
      case 'list': {
        const all = options.registry.list(target, {
          labelSelector: query.get('labelSelector') ?? undefined,
          fieldSelector: query.get('fieldSelector') ?? undefined,
        });
        return readAnswer(req, type, all, query, true);
      }
      case 'create': {
        const writeOptions = writeOptionsOf(req, query, 'CreateOptions');
        const body = await objectBody(req, type);
        return dryRunnable(query, () => ({
          status: 201,
          body: options.registry.create(target, body, writeOptions),
          warnings: writeOptions.warnings,
        }));
      }
      case 'update': {
        const writeOptions = { ...writeOptionsOf(req, query, 'UpdateOptions'), authorizeCreate };
        const body = await objectBody(req, type);
        return dryRunnable(query, () => {
          const result = options.registry.update(named, body, writeOptions);
          return { status: result.created ? 201 : 200, body: result.object, warnings: writeOptions.warnings };
        });
      }
      case 'patch': {
        const writeOptions = { ...writeOptionsOf(req, query, 'PatchOptions'), authorizeCreate };
        const text = (await readBody(req)).toString('utf8');
        const forceParam = query.get('force');
        return dryRunnable(query, () => {
          const result = patchObject(options.registry, named, req.headers['content-type'] ?? '', text, {
            ...writeOptions,
            fieldManagerParam: query.get('fieldManager') ?? undefined,
            force: forceParam === null ? undefined : forceParam === 'true',
          });
          return { status: result.created ? 201 : 200, body: result.object, warnings: writeOptions.warnings };
        });
      }
      case 'delete': {
        const body = await readBody(req);
        const deleteOptions = body.length > 0 ? parseJsonBody(body) : {};
        const preconditions = isJsonObject(deleteOptions) && isJsonObject(deleteOptions.preconditions) ? deleteOptions.preconditions : {};
        return dryRunnable(query, () => ({
          status: 200,
          body: options.registry.delete(named, {
            ...(stringAt(preconditions, 'uid') ? { uid: stringAt(preconditions, 'uid')! } : {}),
            ...(stringAt(preconditions, 'resourceVersion') ? { resourceVersion: stringAt(preconditions, 'resourceVersion')! } : {}),
          }),
        }));
      }
      default:
        throw methodNotAllowed();
    }
  }

  /** A single object or a list, as JSON or as the Table kubectl's printers ask for. */
  function readAnswer(req: IncomingMessage, type: ResourceType, objects: JsonObject[], query: URLSearchParams, isList: boolean): Answer {
    const page = isList ? paginate(objects, query) : { items: objects, continueToken: undefined, remaining: 0 };
    const resourceVersion = options.store.currentResourceVersion();
    if (wantsTable(req.headers.accept)) {
      const table = toTable(strategyFor(type), page.items, resourceVersion, query.get('includeObject') ?? undefined, options.clock.now());
      if (page.continueToken) (table.metadata as JsonObject).continue = page.continueToken;
      return { status: 200, body: table, contentType: TABLE_CONTENT_TYPE };
    }
    if (!isList) return { status: 200, body: objects[0]! };
    return {
      status: 200,
      body: {
        kind: `${type.kind}List`,
        apiVersion: apiVersionOf(type),
        metadata: {
          resourceVersion,
          ...(page.continueToken
            ? { continue: page.continueToken, ...(page.remaining > 0 ? { remainingItemCount: page.remaining } : {}) }
            : {}),
        },
        // List items carry no kind or apiVersion, as in the API server's lists of built-in types.
        items: page.items.map(({ kind: _kind, apiVersion: _apiVersion, ...rest }) => rest),
      },
    };
  }

  /** Runs a write; with dryRun=All, everything it stored is put back as it was. */
  function dryRunnable(query: URLSearchParams, write: () => Answer): Answer {
    const dryRun = query.getAll('dryRun');
    const unsupported = dryRun.filter((v) => v !== 'All');
    if (unsupported.length > 0) {
      throw invalid({ group: 'meta.k8s.io', kind: 'CreateOptions' }, '', [
        { type: 'NotSupported', field: 'dryRun', value: unsupported[0]!, detail: 'supported values: "All"' },
      ]);
    }
    if (dryRun.length === 0) return write();
    return options.store.rolledBack(write);
  }
}

/**
 * The verb as the API server's RequestInfo names it, for the request log: a resource request's
 * Kubernetes verb (a GET of a collection is `list`, of an object `get`), else the lowercased method.
 */
function requestVerb(method: string, url: URL): string {
  let path: ApiPath;
  try {
    path = parseApiPath(url.pathname);
  } catch {
    // A malformed escape: routing answers it with its Status; the log still gets a verb.
    return method.toLowerCase();
  }
  const verb = path.kind === 'collection' || path.kind === 'object' ? verbOf(method, path.kind, url) : undefined;
  return verb ?? method.toLowerCase();
}

function verbOf(method: string, kind: 'collection' | 'object', url: URL): string | undefined {
  if (kind === 'collection') {
    if (method === 'GET') return url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1' ? 'watch' : 'list';
    if (method === 'POST') return 'create';
    if (method === 'DELETE') return 'deletecollection';
    return undefined;
  }
  return ({ GET: 'get', PUT: 'update', PATCH: 'patch', DELETE: 'delete' } as Record<string, string>)[method];
}

function writeOptionsOf(req: IncomingMessage, query: URLSearchParams, optionsKind: string): WriteOptions {
  const fieldManager = query.get('fieldManager') ?? '';
  if (fieldManager.length > FIELD_MANAGER_MAX_LENGTH) {
    throw invalid({ group: 'meta.k8s.io', kind: optionsKind }, '', [
      { type: 'TooLong', field: 'fieldManager', detail: `may not be more than ${FIELD_MANAGER_MAX_LENGTH} bytes` },
    ]);
  }
  const validation = query.get('fieldValidation') ?? '';
  if (!['', 'Ignore', 'Warn', 'Strict'].includes(validation)) {
    throw invalid({ group: 'meta.k8s.io', kind: optionsKind }, '', [
      { type: 'NotSupported', field: 'fieldValidation', value: validation, detail: 'supported values: "", "Ignore", "Strict", "Warn"' },
    ]);
  }
  return {
    manager: fieldManager || managerFromUserAgent(req.headers['user-agent'] ?? ''),
    fieldValidation: (validation || 'Warn') as FieldValidation,
    warnings: [],
  };
}

/** prefixFromUserAgent: the product name before the first '/', printable characters only. */
function managerFromUserAgent(userAgent: string): string {
  const product = userAgent.split('/')[0] ?? '';
  let out = '';
  for (const c of product) {
    if (/\p{C}/u.test(c)) continue;
    if (Buffer.byteLength(out + c) > FIELD_MANAGER_MAX_LENGTH) break;
    out += c;
  }
  return out;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) {
      req.resume();
      throw new KubeStatusError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${MAX_BODY_BYTES}`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * A POST or PUT body: JSON or YAML, or protobuf for Secrets (what kubectl's typed clients send for
 * `create secret`); other kinds' protobuf is refused as a media type the double does not read.
 */
async function objectBody(req: IncomingMessage, type: ResourceType): Promise<JsonObject> {
  const body = await readBody(req);
  const mediaType = (req.headers['content-type'] ?? 'application/json').split(';')[0]!.trim();
  let value: unknown;
  if (mediaType === 'application/json' || mediaType === '') value = parseJsonBody(body);
  else if (mediaType === PROTOBUF_MEDIA_TYPE && type.resource === 'secrets') {
    try {
      value = decodeProtobufObject(body);
    } catch (error) {
      if (error instanceof ProtobufError) throw badRequest(error.message);
      throw error;
    }
  } else if (mediaType === 'application/yaml') {
    try {
      value = parseYaml(body.toString('utf8'), { maxAliasCount: 100 });
    } catch (error) {
      throw badRequest(`error converting YAML to JSON: ${(error as Error).message.split('\n')[0]}`);
    }
  } else throw unsupportedMediaType(['application/json', 'application/yaml']);
  if (!isJsonObject(value)) throw badRequest("Object 'Kind' is missing in the request body");
  return value;
}

function parseJsonBody(body: Buffer): JsonValue {
  try {
    return JSON.parse(body.toString('utf8')) as JsonValue;
  } catch (error) {
    throw badRequest(`couldn't get version/kind; json parse error: ${(error as Error).message}`);
  }
}

const CONTINUE_PREFIX = 'double:';

/** limit/continue over the (sorted) list; the token names the last item returned. */
function paginate(
  items: JsonObject[],
  query: URLSearchParams,
): { items: JsonObject[]; continueToken: string | undefined; remaining: number } {
  const keyOf = (object: JsonObject) => {
    const metadata = isJsonObject(object.metadata) ? object.metadata : {};
    return `${stringAt(metadata, 'namespace') ?? ''}/${stringAt(metadata, 'name') ?? ''}`;
  };
  let start = 0;
  const token = query.get('continue');
  if (token) {
    const decoded = Buffer.from(token, 'base64url').toString('utf8');
    if (!decoded.startsWith(CONTINUE_PREFIX))
      throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
    const after = decoded.slice(CONTINUE_PREFIX.length);
    start = items.findIndex((item) => keyOf(item) > after);
    if (start < 0) start = items.length;
  }
  const limit = Number(query.get('limit') ?? '0');
  const rest = items.slice(start);
  if (!Number.isInteger(limit) || limit <= 0 || rest.length <= limit) return { items: rest, continueToken: undefined, remaining: 0 };
  const page = rest.slice(0, limit);
  const continueToken = Buffer.from(`${CONTINUE_PREFIX}${keyOf(page[page.length - 1]!)}`).toString('base64url');
  return { items: page, continueToken, remaining: rest.length - limit };
}

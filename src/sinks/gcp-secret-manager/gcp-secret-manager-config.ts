import * as z from 'zod';

import { fromZodIssues } from '../../common/config-issues.js';
import type { Env } from '../../common/env-variables.js';
import { strictObject } from '../../common/strict-object.js';
import type { ConfigIssue } from '../../errors.js';
import type { Sameness, SinkParseContext, SinkParseResult } from '../sink.js';

export interface GcpSecretManagerSinkConfig {
  type: 'gcp-secret-manager';
  /** The project id (or number) that holds the secret: from the sink, else GOOGLE_CLOUD_PROJECT. */
  project: string;
  /** The secret's id in the project. */
  secret: string;
  /** Replica locations for user-managed replication; empty for automatic replication. */
  locations: string[];
  /** Set on the secret beside the ownership label; other labels on it are kept. */
  labels: Record<string, string>;
  /**
   * `host:port` of the Secret Manager endpoint to use instead of Google's public one (a Private
   * Service Connect endpoint); always TLS. Undefined for secretmanager.googleapis.com:443.
   */
  endpoint: string | undefined;
  /** Take over a secret that token-rotator does not manage (no managed-by label). */
  adopt: boolean;
}

/** The ownership marker: a label, as labels are what policies and `gcloud secrets list --filter` see. */
export const MANAGED_BY_LABEL = 'managed-by';
export const MANAGED_BY = 'token-rotator';

/** Where the project comes from when the sink does not say: the variable Google's tools document. */
export const PROJECT_VARIABLE = 'GOOGLE_CLOUD_PROJECT';

/*
 * Secret Manager's own rules (google/cloud/secretmanager/v1/resources.proto): label keys start with
 * a lowercase letter, then lowercase letters, digits, `_` and `-`, 63 characters at most, values
 * the same without the first rule; at most 128 bytes of UTF-8 each and 64 labels per secret.
 */
export const LABEL_KEY = /^[\p{Ll}\p{Lo}][\p{Ll}\p{Lo}\p{N}_-]{0,62}$/u;
export const LABEL_VALUE = /^[\p{Ll}\p{Lo}\p{N}_-]{0,63}$/u;
export const MAX_LABELS = 64;
const MAX_LABEL_BYTES = 128;
/** A secret id: letters, digits, `-` and `_`, at most 255 characters. */
const SECRET_ID = /^[A-Za-z0-9_-]{1,255}$/;
/** A project id (6 to 30 characters, optionally domain-scoped as `example.com:my-project`) or a project number. */
const PROJECT = /^(?:(?:[a-z0-9-]+\.)+[a-z]{2,}:)?[a-z][-a-z0-9]{4,28}[a-z0-9]$|^[1-9][0-9]{0,19}$/;
/** A location id such as europe-west1. */
const LOCATION = /^[a-z][a-z0-9-]{0,61}[a-z0-9]$/;
/** `host[:port]`, optionally written as an https:// URL with nothing after the authority. */
const ENDPOINT = /^(?:https:\/\/)?([A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::([0-9]{1,5}))?\/?$/;

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

// Exported for the policy's JSON Schema (src/config/policy-json-schema.ts), which editors check against.
export const schema = strictObject({
  type: z.literal('gcp-secret-manager'),
  project: z.string().regex(PROJECT, 'must be a project id (6 to 30 lowercase letters, digits and "-") or a project number').optional(),
  secret: z.string().regex(SECRET_ID, {
    error: (issue) => {
      // One spelling per secret: its resource name is written as project and secret.
      const [, project, secret] = /^projects\/([^/]+)\/secrets\/([^/]+)$/.exec(String(issue.input)) ?? [];
      return project
        ? `is a resource name: write project: ${JSON.stringify(project)} and secret: ${JSON.stringify(secret)}`
        : 'must be a secret id: at most 255 letters, digits, "-" and "_"';
    },
  }),
  locations: z
    .array(z.string().regex(LOCATION, 'must be a location id such as europe-west1'))
    .min(1, 'must name at least one location; leave it out for automatic replication')
    .refine((list) => new Set(list).size === list.length, 'names a location twice')
    .optional(),
  labels: z
    .record(z.string(), z.string())
    .superRefine((labels, ctx) => {
      const issue = (key: string, message: string) => ctx.addIssue({ code: 'custom', path: [key], message });
      for (const [key, value] of Object.entries(labels)) {
        if (key === MANAGED_BY_LABEL) issue(key, 'is set by token-rotator itself');
        else if (!LABEL_KEY.test(key) || bytes(key) > MAX_LABEL_BYTES)
          issue(key, 'must be a label key: a lowercase letter, then up to 62 lowercase letters, digits, "_" and "-"');
        if (!LABEL_VALUE.test(value) || bytes(value) > MAX_LABEL_BYTES)
          issue(key, 'must be a label value: at most 63 lowercase letters, digits, "_" and "-"');
      }
      if (Object.keys(labels).length > MAX_LABELS - 1)
        ctx.addIssue({ code: 'custom', message: `at most ${MAX_LABELS - 1}: a secret holds ${MAX_LABELS} labels, one of them ours` });
    })
    .default({}),
  endpoint: z
    .string()
    .regex(ENDPOINT, 'must be host[:port] of a Secret Manager endpoint (TLS), such as secretmanager-myendpoint.p.googleapis.com')
    .optional(),
  adopt: z.boolean().default(false),
});

/** The project the sink names, or GOOGLE_CLOUD_PROJECT; an issue at `project` when neither says. */
function projectOrDefault(raw: unknown, env: Env, issues: ConfigIssue[]): string | undefined {
  const given = (raw as { project?: unknown } | null)?.project;
  if (given !== undefined) return typeof given === 'string' ? given : undefined;
  const fromEnv = env[PROJECT_VARIABLE]?.trim();
  if (!fromEnv) {
    issues.push({ path: 'project', message: `required: set project on the sink, or ${PROJECT_VARIABLE} in the environment` });
    return undefined;
  }
  if (!PROJECT.test(fromEnv)) {
    issues.push({ path: 'project', message: `not set, and ${PROJECT_VARIABLE} is not a project id or number` });
    return undefined;
  }
  return fromEnv;
}

/** `host:port`, the port 443 unless given. */
function normalEndpoint(endpoint: string): string {
  const [, host, port] = ENDPOINT.exec(endpoint)!;
  return `${host}:${port ?? '443'}`;
}

export function parseGcpSecretManagerConfig(raw: unknown, context: SinkParseContext): SinkParseResult<GcpSecretManagerSinkConfig> {
  const parsed = schema.safeParse(raw, { reportInput: true });
  const issues = parsed.success ? [] : fromZodIssues(parsed.error.issues);
  // Said even when other fields are wrong, so that one run names every problem.
  const project = projectOrDefault(raw, context.env ?? {}, issues);
  if (!parsed.success || !project) return { ok: false, issues };
  const { secret, locations, labels, endpoint, adopt } = parsed.data;
  if (endpoint !== undefined) {
    const port = Number(normalEndpoint(endpoint).split(':').at(-1));
    if (port < 1 || port > 65535) issues.push({ path: 'endpoint', message: 'has a port outside 1 to 65535' });
  }
  if (issues.length > 0) return { ok: false, issues };
  return {
    ok: true,
    config: {
      type: 'gcp-secret-manager',
      project,
      secret,
      locations: locations ?? [],
      labels,
      endpoint: endpoint === undefined ? undefined : normalEndpoint(endpoint),
      adopt,
    },
  };
}

/** The secret's resource name, as the API takes it. */
export const secretName = (config: GcpSecretManagerSinkConfig) => `projects/${config.project}/secrets/${config.secret}`;

const isProjectNumber = (project: string) => /^[0-9]+$/.test(project);

/**
 * A project by id and a project by number may be one project: only Google knows, so `validate`
 * warns and `validate --online` asks. Two ids, or two numbers, are two projects.
 */
export function compareGcpSecrets(a: GcpSecretManagerSinkConfig, b: GcpSecretManagerSinkConfig): Sameness | undefined {
  if (a.secret !== b.secret || isProjectNumber(a.project) === isProjectNumber(b.project)) return undefined;
  const [id, number] = isProjectNumber(a.project) ? [b.project, a.project] : [a.project, b.project];
  return { verdict: 'unknown', why: `both are the secret ${a.secret} if project ${id} is project number ${number}` };
}

/** `gcp-secret-manager projects/my-project/secrets/ingest-token`: for tables, logs and every error about it. */
export const describeGcpSecretManager = (config: GcpSecretManagerSinkConfig) => `gcp-secret-manager ${secretName(config)}`;

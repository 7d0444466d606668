import * as z from 'zod';

import { fromZodIssues } from '../../common/config-issues.js';
import { strictObject } from '../../common/strict-object.js';
import { namespaceOrDefault } from '../../kubernetes/default-namespace.js';
import { DATA_KEY, LABEL_KEY, LABEL_VALUE, MANAGED_BY_LABEL, NAMESPACE_NAME, OBJECT_NAME } from '../../kubernetes/names.js';
import { reservedNameReason } from '../../kubernetes/rotator-objects.js';
import { FILE_FORMATS, type FileFormat } from '../file/file-format.js';
import type { SinkParseContext, SinkParseResult } from '../sink.js';

export interface KubernetesSecretSinkConfig {
  type: 'kubernetes-secret';
  name: string;
  namespace: string;
  /** The data key that holds the secret. */
  key: string;
  format: FileFormat;
  /** The variable name, for format `env`. */
  envKey: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  secretType: string;
  /** Take over a Secret that token-rotator does not manage (no managed-by label). */
  adopt: boolean;
}

/** Ours: a policy may add to them, never replace them. */
const RESERVED_PREFIX = 'token-rotator.io/';

/** Keys token-rotator sets itself: a policy that set them would be overwritten, or would fake our marks. */
function refuseOurs(isOurs: (key: string) => boolean) {
  return (record: Record<string, string>, ctx: z.RefinementCtx) => {
    for (const key of Object.keys(record).filter(isOurs))
      ctx.addIssue({ code: 'custom', path: [key], message: 'is set by token-rotator itself' });
  };
}

// Exported for the policy's JSON Schema (src/config/policy-json-schema.ts), which editors check against.
export const schema = strictObject({
  type: z.literal('kubernetes-secret'),
  name: z
    .string()
    .max(253, 'at most 253 characters')
    .regex(OBJECT_NAME, 'must be a Kubernetes object name: lowercase letters, digits, "-" and "."')
    // The rotator's own Secrets, in any namespace: see reservedNameReason.
    .superRefine((name, ctx) => {
      const reserved = reservedNameReason(name);
      if (reserved) ctx.addIssue({ code: 'custom', message: `is reserved: ${reserved}` });
    }),
  namespace: z
    .string()
    .max(63, 'at most 63 characters')
    .regex(NAMESPACE_NAME, 'must be a namespace name: lowercase letters, digits and "-"')
    .optional(),
  key: z.string().max(253).regex(DATA_KEY, 'must be a Secret data key: letters, digits, "-", "_" and "."').default('token'),
  format: z.enum(FILE_FORMATS).default('raw'),
  envKey: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
    .optional(),
  labels: z
    .record(
      z.string().regex(LABEL_KEY, 'must be a label key'),
      z.string().regex(LABEL_VALUE, 'must be a label value (at most 63 characters)'),
    )
    .superRefine(refuseOurs((k) => k === MANAGED_BY_LABEL || k.startsWith(RESERVED_PREFIX)))
    .default({}),
  annotations: z
    .record(z.string().regex(LABEL_KEY, 'must be an annotation key'), z.string())
    .superRefine(refuseOurs((k) => k.startsWith(RESERVED_PREFIX)))
    .default({}),
  secretType: z.string().min(1).default('Opaque'),
  adopt: z.boolean().default(false),
});

export function parseKubernetesSecretConfig(raw: unknown, context: SinkParseContext): SinkParseResult<KubernetesSecretSinkConfig> {
  const parsed = schema.safeParse(raw, { reportInput: true });
  const issues = parsed.success ? [] : fromZodIssues(parsed.error.issues);
  // Said even when other fields are wrong, so that one run names every problem.
  const namespace = namespaceOrDefault(raw, context.env ?? {}, issues);
  if (!parsed.success || !namespace) return { ok: false, issues };
  const { name, key, format, envKey, labels, annotations, secretType, adopt } = parsed.data;
  if (envKey !== undefined && format !== 'env') issues.push({ path: 'envKey', message: 'only used with format: env' });
  if (issues.length > 0) return { ok: false, issues };
  return {
    ok: true,
    config: {
      type: 'kubernetes-secret',
      name,
      namespace,
      key,
      format,
      envKey: envKey ?? 'AXIOM_TOKEN',
      labels,
      annotations,
      secretType,
      adopt,
    },
  };
}

/** `kubernetes-secret apps/ingest-token[token]`: for tables, logs and every error about it. */
export const describeKubernetesSecret = (config: KubernetesSecretSinkConfig) =>
  `kubernetes-secret ${config.namespace}/${config.name}[${config.key}]`;

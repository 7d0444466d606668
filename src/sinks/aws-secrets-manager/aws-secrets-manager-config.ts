import * as z from 'zod';

import { fromZodIssues } from '../../common/config-issues.js';
import { strictObject } from '../../common/strict-object.js';
import type { SinkParseContext, SinkParseResult } from '../sink.js';
import { SECRET_ARN } from './secret-identity.js';
import { isReservedTagKey, MAX_USER_TAGS, TAG_KEY, TAG_VALUE } from './secret-tags.js';

export interface AwsSecretsManagerSinkConfig {
  type: 'aws-secrets-manager';
  /** The secret's name or ARN, as the API takes it in `SecretId`. */
  secretId: string;
  /**
   * The region to call: the sink's `region`, else the region of an ARN `secretId`; undefined when
   * neither says, and the SDK's own chain (AWS_REGION, the profile's region) decides.
   */
  region: string | undefined;
  /** A field of a JSON object the secret is stored in, other fields kept; undefined: the secret is the whole value. */
  key: string | undefined;
  /** The policy's own tags, set on create and kept on every write. */
  tags: Record<string, string>;
  /** The KMS key a new secret is encrypted with; undefined: Secrets Manager's own `aws/secretsmanager`. */
  kmsKeyId: string | undefined;
  /** Take over a secret that token-rotator does not manage (no `managed-by: token-rotator` tag). */
  adopt: boolean;
  /**
   * AWS_REGION when the sink names neither a region nor an ARN: where the SDK will look, so that
   * `prod/x` and its ARN in that region are found to be one secret. Never passed to the SDK.
   */
  environmentRegion?: string;
}

/** A secret's name as CreateSecret takes it. */
const SECRET_NAME = /^[A-Za-z0-9/_+=.@-]{1,512}$/;
/** A region as the API spells it (RegionType). */
const REGION = /^([a-z]+-)+\d+$/;

// Exported for the policy's JSON Schema (src/config/policy-json-schema.ts), which editors check against.
export const schema = strictObject({
  type: z.literal('aws-secrets-manager'),
  secretId: z
    .string()
    .min(1, 'must not be empty')
    .max(2048, 'at most 2048 characters')
    .refine(
      (id) => SECRET_NAME.test(id) || SECRET_ARN.test(id),
      'must be a secret name (letters, digits and / _ + = . @ -, at most 512) or a secret ARN (arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME)',
    ),
  region: z.string().regex(REGION, 'must be an AWS region such as eu-west-1').optional(),
  key: z.string().min(1, 'must not be empty').max(256, 'at most 256 characters').optional(),
  tags: z
    .record(
      z
        .string()
        .regex(TAG_KEY, 'must be a tag key: 1 to 128 letters, digits, spaces and _ . : / = + - @')
        .refine((key) => !key.toLowerCase().startsWith('aws:'), 'tag keys starting with aws: are reserved by AWS')
        .refine((key) => !isReservedTagKey(key), 'is set by token-rotator itself'),
      z.string().regex(TAG_VALUE, 'must be a tag value: at most 256 letters, digits, spaces and _ . : / = + - @'),
    )
    .refine(
      (tags) => Object.keys(tags).length <= MAX_USER_TAGS,
      `at most ${MAX_USER_TAGS}: a secret holds 50 tags, and token-rotator sets 6 of them`,
    )
    .default({}),
  kmsKeyId: z.string().min(1, 'must not be empty').max(2048, 'at most 2048 characters').optional(),
  adopt: z.boolean().default(false),
});

export function parseAwsSecretsManagerConfig(raw: unknown, context: SinkParseContext): SinkParseResult<AwsSecretsManagerSinkConfig> {
  const parsed = schema.safeParse(raw, { reportInput: true });
  if (!parsed.success) return { ok: false, issues: fromZodIssues(parsed.error.issues) };
  const { secretId, region, key, tags, kmsKeyId, adopt } = parsed.data;
  // An ARN says where the secret is; a region that says otherwise would look for it elsewhere.
  const arnRegion = SECRET_ARN.exec(secretId)?.[2];
  if (arnRegion && region && arnRegion !== region) {
    return {
      ok: false,
      issues: [{ path: 'region', message: `is ${region}, but the secretId ARN is in ${arnRegion}; remove region or make them agree` }],
    };
  }
  const fromEnvironment = (region ?? arnRegion) ? undefined : context.env?.AWS_REGION;
  return {
    ok: true,
    config: {
      type: 'aws-secrets-manager',
      secretId,
      region: region ?? arnRegion,
      key,
      tags,
      kmsKeyId,
      adopt,
      ...(fromEnvironment && REGION.test(fromEnvironment) ? { environmentRegion: fromEnvironment } : {}),
    },
  };
}

/** Whether `secretId` is an ARN rather than a name: a secret named by ARN cannot be created. */
export const isSecretArn = (secretId: string): boolean => SECRET_ARN.test(secretId);

/** `aws-secrets-manager prod/ingest[token] (eu-west-1)`: for tables, logs and every error about it. */
export function describeAwsSecret(config: AwsSecretsManagerSinkConfig): string {
  const key = config.key === undefined ? '' : `[${config.key}]`;
  const region = config.region && !isSecretArn(config.secretId) ? ` (${config.region})` : '';
  return `aws-secrets-manager ${config.secretId}${key}${region}`;
}

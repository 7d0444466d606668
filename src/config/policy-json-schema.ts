import * as z from 'zod';

import { reloadTypes } from '../reload/registry.js';
import { schema as awsSecretsManager } from '../sinks/aws-secrets-manager/aws-secrets-manager-config.js';
import { schema as azureKeyVault } from '../sinks/azure-key-vault/azure-key-vault-config.js';
import { schema as exec } from '../sinks/exec/exec-sink-config.js';
import { schema as file } from '../sinks/file/file-sink-config.js';
import { schema as gcpSecretManager } from '../sinks/gcp-secret-manager/gcp-secret-manager-config.js';
import { schema as kubernetesSecret } from '../sinks/kubernetes-secret/kubernetes-secret-config.js';
import type { SinkTypeName } from '../sinks/registry.js';
import { schema as vault } from '../sinks/vault/vault-sink-config.js';
import { policySchema, reloadListSchema, sinkListSchema } from './policy-schema.js';

/**
 * The schema each sink type parses its own options with, by type: checked by the compiler, so a
 * new sink type cannot be left out of the editors' schema.
 */
const sinkSchemas = {
  file,
  'kubernetes-secret': kubernetesSecret,
  exec,
  vault,
  'aws-secrets-manager': awsSecretsManager,
  'gcp-secret-manager': gcpSecretManager,
  'azure-key-vault': azureKeyVault,
} satisfies Record<SinkTypeName, z.ZodType>;

type JsonSchema = Record<string, unknown>;

/**
 * What an editor can check: the shape and the fixed rules (types, enums, patterns, bounds). Rules
 * that need code (a duration's length, a cron expression, links in a path) stay with `validate`, so
 * the input side of every transform is what is described.
 */
const OPTIONS = { io: 'input', target: 'draft-07', unrepresentable: 'any' } as const;

function withoutMeta(schema: JsonSchema): JsonSchema {
  const { $schema: _ignored, ...rest } = schema;
  return rest;
}

function sinkItemSchema(): JsonSchema {
  const types = Object.keys(sinkSchemas);
  return {
    description: `A sink: where a new secret is delivered. type: ${types.join(' | ')}`,
    type: 'object',
    required: ['type'],
    properties: { type: { enum: types } },
    // One branch per type, chosen by `type`: an editor completes and checks that type's options.
    allOf: Object.entries(sinkSchemas).map(([type, schema]) => ({
      if: { properties: { type: { const: type } }, required: ['type'] },
      then: withoutMeta(z.toJSONSchema(schema, OPTIONS) as JsonSchema),
    })),
  };
}

/** Reloads are parsed by their own types too; the editor schema knows their types. */
function reloadItemSchema(): JsonSchema {
  return { type: 'object', required: ['type'], properties: { type: { enum: Object.keys(reloadTypes) } } };
}

/**
 * The policy file's JSON Schema, generated from the zod schemas the code validates with (the
 * policy's and each sink type's), for editors (`# yaml-language-server: $schema=...`).
 */
export function policyJsonSchema(): JsonSchema {
  const schema = z.toJSONSchema(policySchema, {
    ...OPTIONS,
    override: ({ zodSchema, jsonSchema }) => {
      if (zodSchema === sinkListSchema) (jsonSchema as JsonSchema).items = sinkItemSchema();
      if (zodSchema === reloadListSchema) (jsonSchema as JsonSchema).items = reloadItemSchema();
    },
  }) as JsonSchema;
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'token-rotator policy',
    description:
      'Which tokens token-rotator keeps rotated, when, and where each new secret goes. Check a policy with: token-rotator validate',
    ...withoutMeta(schema),
  };
}

import type { Reference } from '../common/reference.js';
import { type AwsSecretsManagerSinkConfig, awsSecretsManagerSinkType } from './aws-secrets-manager/aws-secrets-manager-sink.js';
import { type AzureKeyVaultSinkConfig, azureKeyVaultSinkType } from './azure-key-vault/azure-key-vault-sink.js';
import { type ExecSinkConfig, execSinkType } from './exec/exec-sink.js';
import { fileSinkType } from './file/file-sink.js';
import type { FileSinkConfig } from './file/file-sink-config.js';
import { type GcpSecretManagerSinkConfig, gcpSecretManagerSinkType } from './gcp-secret-manager/gcp-secret-manager-sink.js';
import { type KubernetesSecretSinkConfig, kubernetesSecretSinkType } from './kubernetes-secret/kubernetes-secret-sink.js';
import type { SinkType } from './sink.js';
import { type VaultSinkConfig, vaultSinkType } from './vault/vault-sink.js';

/** Every sink type, checked by the compiler: a new type is one entry here and one folder. */
export const sinkTypes = {
  file: fileSinkType,
  'kubernetes-secret': kubernetesSecretSinkType,
  exec: execSinkType,
  vault: vaultSinkType,
  'aws-secrets-manager': awsSecretsManagerSinkType,
  'gcp-secret-manager': gcpSecretManagerSinkType,
  'azure-key-vault': azureKeyVaultSinkType,
} satisfies { [K in SinkConfig['type']]: SinkType<Extract<SinkConfig, { type: K }>> };

export type SinkConfig =
  | FileSinkConfig
  | KubernetesSecretSinkConfig
  | ExecSinkConfig
  | VaultSinkConfig
  | AwsSecretsManagerSinkConfig
  | GcpSecretManagerSinkConfig
  | AzureKeyVaultSinkConfig;
export type SinkTypeName = SinkConfig['type'];

export function isSinkType(type: unknown): type is SinkTypeName {
  return typeof type === 'string' && Object.hasOwn(sinkTypes, type);
}

/**
 * The registry widened so that each type's methods take any config: sound because every caller
 * looks a type up by its own config's `type`.
 */
export const sinkTypesByName = sinkTypes as unknown as Readonly<Record<SinkTypeName, SinkType<SinkConfig>>>;

function typeOf(config: SinkConfig): SinkType<SinkConfig> {
  return sinkTypesByName[config.type];
}

/** The identity of a sink's destination: what the journal marks as delivered. */
export function sinkTarget(config: SinkConfig): string {
  return typeOf(config).target(config);
}

/**
 * A target as a journal entry or a state record holds it, in today's form: one written before its
 * type's form changed still names the same sink. Targets start with their type and a colon.
 */
export function upgradeStoredTarget(stored: string): string {
  const type = stored.slice(0, stored.indexOf(':'));
  return isSinkType(type) ? (sinkTypesByName[type].upgradeTarget?.(stored) ?? stored) : stored;
}

export function describeSink(config: SinkConfig): string {
  return typeOf(config).describe(config);
}

/** The real local location of a sink's destination; undefined for sink types that write elsewhere. */
export function sinkLocalPath(config: SinkConfig): string | undefined {
  return typeOf(config).localPath?.(config);
}

/** The credentials a sink takes by reference, with paths relative to the sink. */
export function sinkReferences(config: SinkConfig): Reference[] {
  return typeOf(config).references?.(config) ?? [];
}

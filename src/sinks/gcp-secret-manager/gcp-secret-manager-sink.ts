import type { SinkType } from '../sink.js';
import {
  compareGcpSecrets,
  describeGcpSecretManager,
  type GcpSecretManagerSinkConfig,
  parseGcpSecretManagerConfig,
  secretName,
} from './gcp-secret-manager-config.js';

export type { GcpSecretManagerSinkConfig };

/**
 * A secret in Google Cloud Secret Manager, one per token: each new token is a new version, the
 * secret carries the ownership label and the token's metadata as annotations (versions carry none),
 * and a secret another tool manages is refused unless the sink says `adopt`. Credentials are
 * Google's Application Default Credentials. The client, and Google's SDK with it, loads only when
 * a run has such a sink.
 */
export const gcpSecretManagerSinkType: SinkType<GcpSecretManagerSinkConfig> = {
  type: 'gcp-secret-manager',
  parse: parseGcpSecretManagerConfig,
  // The endpoint is only a way to the same secret, so it is no part of the identity. A project id
  // and its number are two spellings only Google can tell apart: compared, and asked online.
  target: (config) => `gcp-secret-manager:${secretName(config)}`,
  spellings: { keys: (config) => [config.secret], compare: compareGcpSecrets },
  describe: describeGcpSecretManager,
  async open(context) {
    const { gcpSecretManagerClient } = await import('./gcp-secret-manager-client.js');
    return gcpSecretManagerClient(context);
  },
};

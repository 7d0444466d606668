import type { SinkType } from '../sink.js';
import {
  type AwsSecretsManagerSinkConfig,
  awsSecretTarget,
  describeAwsSecret,
  parseAwsSecretsManagerConfig,
} from './aws-secrets-manager-config.js';

export type { AwsSecretsManagerSinkConfig };

/**
 * A secret in AWS Secrets Manager, one per token: created when missing (tagged as ours, with the
 * policy's tags and KMS key), else given a new version whose ClientRequestToken comes from the
 * rotation, so a retry never adds a second one. The token's metadata travels as tags; a secret
 * another tool manages is refused unless the sink says `adopt`. The AWS SDK loads only when a run
 * has such a sink.
 */
export const awsSecretsManagerSinkType: SinkType<AwsSecretsManagerSinkConfig> = {
  type: 'aws-secrets-manager',
  parse: parseAwsSecretsManagerConfig,
  target: awsSecretTarget,
  describe: describeAwsSecret,
  async open(context) {
    const { awsSecretsManagerClient } = await import('./aws-secrets-manager-client.js');
    return awsSecretsManagerClient(context);
  },
};

import type { SinkType } from '../sink.js';
import { type AwsSecretsManagerSinkConfig, describeAwsSecret, parseAwsSecretsManagerConfig } from './aws-secrets-manager-config.js';
import { awsSecretKeys, awsSecretTarget, compareAwsSecrets, upgradeAwsSecretTarget } from './secret-identity.js';

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
  upgradeTarget: upgradeAwsSecretTarget,
  // A name and its ARN are one secret, though only an ARN says the account.
  spellings: { keys: awsSecretKeys, compare: compareAwsSecrets },
  describe: describeAwsSecret,
  async open(context) {
    const { awsSecretsManagerClient } = await import('./aws-secrets-manager-client.js');
    return awsSecretsManagerClient(context);
  },
};

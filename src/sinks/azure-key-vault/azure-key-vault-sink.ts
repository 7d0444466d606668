import type { SinkType } from '../sink.js';
import {
  type AzureKeyVaultSinkConfig,
  azureKeyVaultTarget,
  describeAzureKeyVaultSecret,
  parseAzureKeyVaultConfig,
  upgradeAzureKeyVaultTarget,
} from './azure-key-vault-config.js';

export type { AzureKeyVaultSinkConfig };

/**
 * A secret in Azure Key Vault, one per token: each rotation adds a version (tagged managed-by:
 * token-rotator, with the token's id, expiry and rotation id, and the token's expiry as the
 * version's expiresOn), refused when the latest version is not ours unless the sink says `adopt`.
 * Credentials come from the Azure SDK's DefaultAzureCredential, never from the policy. The client,
 * and with it the Azure SDK, loads only when a run has such a sink.
 */
export const azureKeyVaultSinkType: SinkType<AzureKeyVaultSinkConfig> = {
  type: 'azure-key-vault',
  parse: (raw) => parseAzureKeyVaultConfig(raw),
  target: azureKeyVaultTarget,
  upgradeTarget: upgradeAzureKeyVaultTarget,
  describe: describeAzureKeyVaultSecret,
  async open(context) {
    const { azureKeyVaultClient } = await import('./azure-key-vault-client.js');
    return azureKeyVaultClient(context);
  },
};

import type { Reference } from '../../common/reference.js';
import type { SinkType } from '../sink.js';
import { describeVaultSecret, parseVaultConfig, upgradeVaultTarget, type VaultSinkConfig, vaultTarget } from './vault-sink-config.js';

export type { VaultSinkConfig };

/**
 * A secret in a HashiCorp Vault or OpenBao KV version 2 engine, one per token: each rotation adds a
 * version by check-and-set on the version read, keeping the secret's other fields, and marks the
 * secret as ours in its custom metadata with the token's id, expiry and rotation. A secret another
 * tool manages is refused unless the sink says `adopt`. The client (its HTTP code, its logins)
 * loads only when a run has such a sink.
 */
export const vaultSinkType: SinkType<VaultSinkConfig> = {
  type: 'vault',
  parse: parseVaultConfig,
  target: vaultTarget,
  upgradeTarget: upgradeVaultTarget,
  describe: describeVaultSecret,
  references(config): Reference[] {
    switch (config.auth.method) {
      case 'token':
        return [{ path: 'auth.tokenFrom', variable: config.auth.tokenFrom }];
      case 'approle':
        return [
          { path: 'auth.roleIdFrom', variable: config.auth.roleIdFrom },
          { path: 'auth.secretIdFrom', variable: config.auth.secretIdFrom },
        ];
      case 'kubernetes':
        return [];
    }
  },
  async open(context) {
    const { vaultClient } = await import('./vault-client.js');
    return vaultClient(context);
  },
};

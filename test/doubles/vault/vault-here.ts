import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { startVaultDouble, type VaultDouble } from './start-vault-double.js';

/**
 * The minimal policy docs/sinks/vault.md gives for a sink writing `secret/apps/ingest`, verbatim but
 * for the path (test/unit/docs-snippets.test.ts holds them equal): what the tests grant, so that the
 * documented policy is the one proven to be enough.
 */
export function sinkPolicy(mount: string, path: string): string {
  return `
path "${mount}/data/${path}" {
  capabilities = ["create", "update", "read"]
}
path "${mount}/metadata/${path}" {
  capabilities = ["patch", "read"]
}
`;
}

/** The shared raw capture logger, under the name the Vault tests use. */
export { rawLog as capturedLog } from '../../helpers/raw-log.js';

export interface VaultHere {
  /** Plain http, namespaces `team-a`; KV v2 at `secret` (root and team-a), KV v1 at `kv1`; approle in team-a. */
  http: VaultDouble;
  /** https with a self-signed CA (in `caFile`); KV v2 at `secret`; kubernetes auth with role `token-rotator`. */
  tls: VaultDouble;
  caFile: string;
  /** The pod's service account token (token-rotator/token-rotator), as mounted. */
  jwtFile: string;
  approle: { roleId: string; secretId: string };
  close(): Promise<void>;
}

/**
 * Two Vault doubles set up as an operator would for the sink: policies from `sinkPolicy` on the
 * `contract/*` and `tests/*` prefixes, a kubernetes role bound to the rotator's service account,
 * an approle role, and a `breaks` policy every identity carries (empty until a test narrows a path).
 */
export async function vaultHere(dir: string): Promise<VaultHere> {
  const http = await startVaultDouble({ namespaces: ['team-a'] });
  const tls = await startVaultDouble({ tls: true });
  for (const [double, namespace] of [
    [http, undefined],
    [http, 'team-a'],
    [tls, undefined],
  ] as const) {
    double.mount('secret', { ...(namespace ? { namespace } : {}) });
    double.policy('token-rotator', `${sinkPolicy('secret', 'contract/*')}\n${sinkPolicy('secret', 'tests/*')}`, namespace);
    double.policy('breaks', '', namespace);
  }
  http.mount('kv1', { version: 1 });
  http.approle.enable({ namespace: 'team-a' });
  const approle = http.approle.role('token-rotator', { policies: ['token-rotator', 'breaks'] }, { namespace: 'team-a' });
  tls.kubernetes.enable();
  tls.kubernetes.role('token-rotator', {
    boundServiceAccountNames: ['token-rotator'],
    boundServiceAccountNamespaces: ['token-rotator'],
    policies: ['token-rotator', 'breaks'],
    ttlSeconds: 1200,
  });
  const caFile = join(dir, 'vault-ca.pem');
  const jwtFile = join(dir, 'serviceaccount-token');
  await writeFile(caFile, tls.ca!);
  await writeFile(jwtFile, tls.kubernetes.serviceAccountToken('token-rotator', 'token-rotator'), { mode: 0o600 });
  return {
    http,
    tls,
    caFile,
    jwtFile,
    approle,
    close: async () => {
      await Promise.all([http.close(), tls.close()]);
    },
  };
}

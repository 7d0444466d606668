import { SinkError } from '../../errors.js';
import { remoteText } from '../../http/remote-text.js';
import { type AzureKeyVaultSinkConfig, describeAzureKeyVaultSecret } from './azure-key-vault-config.js';

/*
 * Azure SDK errors turned into errors a user can act on. The SDK's own errors are never kept as a
 * cause: a RestError holds the request (a setSecret request's body is the secret), and identity
 * errors hold the token endpoint's answer. Only their name, status and code travel, and any text
 * the service wrote is masked (`remoteText`) and kept short.
 */

/** The Key Vault operations this sink calls, with the permission each needs in either model. */
export type KeyVaultOperation = 'get' | 'set' | 'update' | 'getDeleted';

const NEEDS: Record<KeyVaultOperation, { rbac: string; accessPolicy: string; what: string }> = {
  get: { rbac: 'Microsoft.KeyVault/vaults/secrets/getSecret/action', accessPolicy: 'get', what: 'read the secret' },
  set: { rbac: 'Microsoft.KeyVault/vaults/secrets/setSecret/action', accessPolicy: 'set', what: 'add a version' },
  update: { rbac: 'Microsoft.KeyVault/vaults/secrets/update/action', accessPolicy: 'set', what: "update the latest version's tags" },
  getDeleted: {
    rbac: 'Microsoft.KeyVault/vaults/secrets/readMetadata/action',
    accessPolicy: 'get',
    what: 'see whether the secret is soft-deleted',
  },
};

/** The role that covers everything this sink does; docs/sinks/azure-key-vault.md gives a narrower custom role too. */
export const SECRETS_ROLE = 'Key Vault Secrets Officer';

interface RestErrorLike {
  name: string;
  message: string;
  statusCode?: number;
  code?: string;
  details?: { error?: { code?: string; innerError?: { code?: string } } };
}

interface AuthenticationErrorLike {
  name: string;
  message: string;
  statusCode?: number;
  errorResponse?: { error?: string; errorDescription?: string };
}

const isAbort = (error: unknown) => (error as Error | undefined)?.name === 'AbortError';

/** The SDK's error as a cause that holds nothing of the request or the answer. */
function bareCause(error: unknown): Error {
  const e = error as Partial<RestErrorLike>;
  const bare = new Error(remoteText(String(e?.message ?? error)));
  bare.name = typeof e?.name === 'string' ? e.name : 'Error';
  return Object.assign(bare, {
    ...(typeof e?.statusCode === 'number' ? { statusCode: e.statusCode } : {}),
    ...(typeof e?.code === 'string' ? { code: e.code } : {}),
  });
}

/** A Key Vault error's inner code (`ForbiddenByRbac`, `ObjectIsDeletedButRecoverable`, `SecretDisabled`). */
export function innerCode(error: unknown): string | undefined {
  return (error as RestErrorLike)?.details?.error?.innerError?.code;
}

export function isRestError(error: unknown): error is RestErrorLike {
  return (error as Error | undefined)?.name === 'RestError';
}

export const statusOf = (error: unknown): number | undefined => (isRestError(error) ? error.statusCode : undefined);

/** What went wrong, and what to do about it, for an error from `operation` on the sink's secret. */
export function translate(config: AzureKeyVaultSinkConfig, operation: KeyVaultOperation, error: unknown): Error {
  if (isAbort(error) || error instanceof SinkError) return error as Error;
  const where = describeAzureKeyVaultSecret(config);
  const fail = (message: string) => new SinkError(`${where}: ${message}`, { cause: bareCause(error) });
  const needs = NEEDS[operation];

  if (isRestError(error) && error.statusCode !== undefined) {
    const status = error.statusCode;
    const code = error.code ?? error.details?.error?.code;
    const inner = innerCode(error);
    const said = `${status}${code ? ` ${code}` : ''}${inner ? `/${inner}` : ''}`;
    if (status === 401) {
      return fail(
        `Key Vault refused the access token (${said}: ${remoteText(error.message)}); the identity must be in the vault's tenant ` +
          `(AZURE_TENANT_ID), or that tenant listed in AZURE_ADDITIONALLY_ALLOWED_TENANTS`,
      );
    }
    if (status === 403 && inner === 'SecretDisabled') {
      return fail(
        `its latest version is disabled, so it cannot be read (${said}); enable it ` +
          `(az keyvault secret set-attributes --vault-name <vault> --name ${config.name} --enabled true) or add an enabled version`,
      );
    }
    if (
      status === 403 &&
      (inner === 'ForbiddenByConnection' || inner === 'ForbiddenByFirewall' || /firewall|network/i.test(error.message))
    ) {
      return fail(
        `the vault's network rules refused this client (${said}); allow its network in the vault's firewall, or reach it through its private endpoint`,
      );
    }
    if (status === 403) {
      const action = /Action: '(Microsoft\.KeyVault\/[A-Za-z/]+)'/.exec(error.message)?.[1] ?? needs.rbac;
      const permission = /does not have secrets (\w+) permission/.exec(error.message)?.[1] ?? needs.accessPolicy;
      if (inner === 'ForbiddenByRbac') {
        return fail(
          `permission denied to ${needs.what} (${said}): the identity lacks the data action ${action}; ` +
            `assign it the role "${SECRETS_ROLE}" on the vault or on this secret (or a custom role with that action)`,
        );
      }
      if (inner === 'AccessDenied' || inner === 'ForbiddenByPolicy') {
        return fail(
          `permission denied to ${needs.what} (${said}): the vault's access policy does not give the identity the secret permission "${permission}"; ` +
            `add secret permissions get and set to its access policy (az keyvault set-policy --secret-permissions get set)`,
        );
      }
      return fail(
        `permission denied to ${needs.what} (${said}): with Azure RBAC, assign the identity the role "${SECRETS_ROLE}" (data action ${action}); ` +
          `with access policies, give it the secret permission "${permission}"`,
      );
    }
    if (status === 409 && inner === 'ObjectIsDeletedButRecoverable') {
      return fail(
        `the secret is deleted but recoverable (soft-delete), and its name cannot be used until it is recovered or purged: ` +
          `recover it to keep its versions (az keyvault secret recover --vault-name <vault> --name ${config.name}), ` +
          `or purge it (az keyvault secret purge --vault-name <vault> --name ${config.name}), then run again`,
      );
    }
    if (status === 429) return fail(`Key Vault is throttling this client (${said}); it is tried again on the next run`);
    if (status >= 500) return fail(`Key Vault failed (${said}: ${remoteText(error.message)}); it is tried again on the next run`);
    return fail(`Key Vault refused to ${needs.what} (${said}: ${remoteText(error.message)})`);
  }

  if (isRestError(error)) {
    // No answer: a name that does not resolve, a refused connection, a certificate not trusted.
    const text = remoteText(error.message);
    const tls = /certificate|self[- ]signed|UNABLE_TO_VERIFY|CERT_/i.test(error.message);
    return fail(
      `cannot reach ${config.vaultUrl} (${text}); ` +
        (tls
          ? 'its TLS certificate is not trusted: give the CA that issued it in NODE_EXTRA_CA_CERTS'
          : 'check vaultUrl, the network and any HTTPS_PROXY / NO_PROXY setting'),
    );
  }

  const name = (error as Error | undefined)?.name;
  const message = String((error as Error | undefined)?.message ?? error);
  if (/AdditionallyAllowedTenants|not configured to acquire tokens for tenant/i.test(message)) {
    return fail(
      "the vault is in another tenant than the credential's (AZURE_TENANT_ID): use an identity of the vault's tenant, " +
        "or list the vault's tenant in AZURE_ADDITIONALLY_ALLOWED_TENANTS",
    );
  }
  const authentication = name === 'AuthenticationError' || name === 'AggregateAuthenticationError' || name === 'CredentialUnavailableError';
  // A credential of the chain reached Entra ID and was refused: what it said matters more than the others being unavailable.
  if (authentication && (name === 'AuthenticationError' || /AADSTS\d+/.test(message))) {
    return authenticationFailed(fail, error as AuthenticationErrorLike);
  }
  if (authentication) {
    return fail(
      'no Azure credential is available: DefaultAzureCredential tried, in order, the environment (AZURE_TENANT_ID, AZURE_CLIENT_ID ' +
        'with AZURE_CLIENT_SECRET or AZURE_CLIENT_CERTIFICATE_PATH), workload identity (AZURE_TENANT_ID, AZURE_CLIENT_ID, ' +
        'AZURE_FEDERATED_TOKEN_FILE), managed identity, then developer tools (Azure CLI, PowerShell, azd); set up one of them ' +
        `(${remoteText(firstLines(message))})`,
    );
  }
  if (/challenge resource .* does not match the requested domain/i.test(message)) {
    return fail(
      `the server at ${config.vaultUrl} asked for a token of another service than Key Vault; vaultUrl must be the vault's URI (https://<vault>.vault.azure.net)`,
    );
  }
  return fail(`${name ?? 'Error'}: ${remoteText(message)}`);
}

const FEDERATION_MISMATCH =
  "the service account token in AZURE_FEDERATED_TOKEN_FILE matches no federated credential of the identity: add one with the cluster's " +
  'OIDC issuer URL, subject system:serviceaccount:<namespace>:<service account> and audience api://AzureADTokenExchange';

/** What Entra ID's AADSTS codes mean for the person running token-rotator. */
const AADSTS_HINTS: Record<string, string> = {
  '7000215': 'the client secret in AZURE_CLIENT_SECRET is wrong: use the secret value (not its id) of a current secret',
  '7000222': 'the client secret in AZURE_CLIENT_SECRET has expired: create a new one',
  '700016': 'no application has the id in AZURE_CLIENT_ID in the tenant AZURE_TENANT_ID',
  '90002': 'the tenant in AZURE_TENANT_ID does not exist',
  '700024':
    'the service account token in AZURE_FEDERATED_TOKEN_FILE has expired: it must be the token the kubelet projects and refreshes (azure-identity-token)',
  '70021': FEDERATION_MISMATCH,
  '700211': FEDERATION_MISMATCH,
  '700212': FEDERATION_MISMATCH,
  '700213': FEDERATION_MISMATCH,
};

/** Microsoft Entra ID refused the credential: what its AADSTS code means for the user. */
function authenticationFailed(fail: (message: string) => SinkError, error: AuthenticationErrorLike): SinkError {
  const text = `${error.errorResponse?.errorDescription ?? ''} ${error.message}`;
  const aadsts = /AADSTS(\d+)/.exec(text)?.[1];
  const hint =
    (aadsts && AADSTS_HINTS[aadsts]) ??
    'check the identity in AZURE_TENANT_ID and AZURE_CLIENT_ID, and its secret, certificate or federated credential';
  // The line Entra ID wrote (AADSTS…), not the chain's preamble about the credentials it skipped.
  const said = error.message.split('\n').find((line) => /AADSTS\d+/.test(line)) ?? firstLines(error.message);
  return fail(`Microsoft Entra ID refused the credential${aadsts ? ` (AADSTS${aadsts})` : ''}: ${hint} (${remoteText(said.trim(), 200)})`);
}

const firstLines = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .slice(0, 3)
    .join(' ');

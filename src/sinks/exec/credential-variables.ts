/**
 * The variables of the rotator's environment that are credentials, besides its own `ROTATOR_*`
 * settings (all of them refused, secret or not): what the vendor SDKs it runs, and its Vault sink by
 * default, authenticate with. A credential here is the secret itself or the path of a file holding
 * one: either, handed to a program, makes the program act as the rotator.
 * Identifiers without their secret half (AWS_ACCESS_KEY_ID, AZURE_CLIENT_ID, AZURE_TENANT_ID,
 * AZURE_USERNAME), regions, endpoints, profile names and config files that select rather than hold
 * credentials (AWS_REGION, AWS_PROFILE, AWS_CONFIG_FILE, AWS_ROLE_ARN, VAULT_ADDR, GOOGLE_CLOUD_PROJECT)
 * are not.
 */
const VENDOR_CREDENTIALS: Readonly<Record<string, string>> = {
  VAULT_TOKEN: "the Vault sink's default token",
  AWS_SECRET_ACCESS_KEY: 'the AWS SDK',
  AWS_SESSION_TOKEN: 'the AWS SDK',
  AWS_CONTAINER_AUTHORIZATION_TOKEN: 'the AWS SDK',
  AWS_WEB_IDENTITY_TOKEN_FILE: 'the AWS SDK',
  AWS_SHARED_CREDENTIALS_FILE: 'the AWS SDK',
  AZURE_CLIENT_SECRET: 'the Azure SDK',
  AZURE_CLIENT_CERTIFICATE_PATH: 'the Azure SDK',
  AZURE_CLIENT_CERTIFICATE_PASSWORD: 'the Azure SDK',
  AZURE_PASSWORD: 'the Azure SDK',
  AZURE_FEDERATED_TOKEN_FILE: 'the Azure SDK',
  IDENTITY_HEADER: "the Azure SDK (App Service's managed identity)",
  MSI_SECRET: "the Azure SDK (App Service's managed identity)",
  GOOGLE_APPLICATION_CREDENTIALS: 'the Google Cloud SDK',
  KUBECONFIG: 'the Kubernetes sink and state',
};

/** The AWS SDK's bearer tokens, one per service: `AWS_BEARER_TOKEN_<SERVICE>`. */
const AWS_BEARER_TOKEN_PREFIX = 'AWS_BEARER_TOKEN_';

const readerOf = (name: string): string | undefined =>
  VENDOR_CREDENTIALS[name] ?? (name.startsWith(AWS_BEARER_TOKEN_PREFIX) ? 'the AWS SDK' : undefined);

/** `NAME` for `NAME_FILE`, the file the rotator reads `NAME` from; undefined for any other name. */
export const variableOfFile = (name: string): string | undefined => (name.endsWith('_FILE') ? name.slice(0, -'_FILE'.length) : undefined);

/**
 * Why `name` is the rotator's own, or one of its credentials (or the `_FILE` that names one, as the
 * rotator reads every variable); undefined when it is neither.
 */
export function rotatorCredentialVariable(name: string): string | undefined {
  if (name.startsWith('ROTATOR_')) return `${name} is the rotator's own setting (ROTATOR_*)`;
  const reader = readerOf(name);
  if (reader) return `${name} is a credential (${reader})`;
  const base = variableOfFile(name);
  const baseReader = base === undefined ? undefined : readerOf(base);
  return baseReader ? `${name} names the file of ${base}, a credential (${baseReader})` : undefined;
}

import { getCACertificates, setDefaultCACertificates } from 'node:tls';

import type { AzureKeyVaultDouble } from './start-azure-key-vault-double.js';

/*
 * What a process started with the double's environment has from the start, given to the running
 * test worker instead. Node reads NODE_EXTRA_CA_CERTS only when it starts, so a worker that is
 * already running adds the CA to its default trust the way that variable would
 * (tls.setDefaultCACertificates, Node 22.19 / 24.5 and later); child-process tests use the variable
 * itself. The Azure SDK reads its settings (AZURE_*, HTTPS_PROXY) from process.env, never from an
 * object it is given, so they are set there, and everything is put back afterwards.
 */

/** Trusts `ca` in this process's default TLS context, as NODE_EXTRA_CA_CERTS would; answers the undo. */
export function trustCa(ca: string): () => void {
  const before = getCACertificates('default');
  setDefaultCACertificates([...before, ca]);
  return () => setDefaultCACertificates(before);
}

/** Sets (or, for undefined, removes) process environment variables; answers the undo. */
export function setProcessEnv(variables: Record<string, string | undefined>): () => void {
  const before = Object.fromEntries(Object.keys(variables).map((name) => [name, process.env[name]]));
  const apply = (values: Record<string, string | undefined>) => {
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
  apply(variables);
  return () => apply(before);
}

/** Every variable that would steer the Azure SDK elsewhere, cleared so that only what a test sets counts. */
export const AZURE_VARIABLES_CLEARED: Record<string, undefined> = Object.fromEntries(
  [
    'AZURE_TENANT_ID',
    'AZURE_CLIENT_ID',
    'AZURE_CLIENT_SECRET',
    'AZURE_CLIENT_CERTIFICATE_PATH',
    'AZURE_CLIENT_CERTIFICATE_PASSWORD',
    'AZURE_CLIENT_SEND_CERTIFICATE_CHAIN',
    'AZURE_USERNAME',
    'AZURE_PASSWORD',
    'AZURE_FEDERATED_TOKEN_FILE',
    'AZURE_AUTHORITY_HOST',
    'AZURE_ADDITIONALLY_ALLOWED_TENANTS',
    'AZURE_TOKEN_CREDENTIALS',
    'AZURE_REGIONAL_AUTHORITY_NAME',
    'AZURE_POD_IDENTITY_AUTHORITY_HOST',
    'IDENTITY_ENDPOINT',
    'IDENTITY_HEADER',
    'MSI_ENDPOINT',
    'MSI_SECRET',
    'IMDS_ENDPOINT',
    'HTTPS_PROXY',
    'https_proxy',
    'HTTP_PROXY',
    'http_proxy',
    'ALL_PROXY',
    'all_proxy',
    'NO_PROXY',
    'no_proxy',
  ].map((name) => [name, undefined]),
);

/** The environment of a workload with an app's client secret (EnvironmentCredential), reaching the double through its proxy. */
export function clientSecretEnv(double: AzureKeyVaultDouble, app: { clientId: string; clientSecret?: string }): Record<string, string> {
  if (!app.clientSecret) throw new Error('the app has no client secret');
  return {
    AZURE_TENANT_ID: double.tenantId,
    AZURE_CLIENT_ID: app.clientId,
    AZURE_CLIENT_SECRET: app.clientSecret,
    HTTPS_PROXY: double.proxyUrl,
  };
}

/**
 * The environment the AKS workload identity webhook injects into a pod (AZURE_CLIENT_ID,
 * AZURE_TENANT_ID, AZURE_FEDERATED_TOKEN_FILE, AZURE_AUTHORITY_HOST), reaching the double through its proxy.
 */
export function workloadIdentityEnv(double: AzureKeyVaultDouble, app: { clientId: string }, tokenFile: string): Record<string, string> {
  return {
    AZURE_TENANT_ID: double.tenantId,
    AZURE_CLIENT_ID: app.clientId,
    AZURE_FEDERATED_TOKEN_FILE: tokenFile,
    AZURE_AUTHORITY_HOST: 'https://login.microsoftonline.com/',
    HTTPS_PROXY: double.proxyUrl,
  };
}

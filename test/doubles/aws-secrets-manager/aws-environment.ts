import type { SecretsManagerDouble } from './start-secrets-manager-double.js';

/**
 * Every variable through which the AWS SDK finds credentials, a region or an endpoint. A test sets
 * its own and clears the rest, so that nothing of the machine it runs on (a developer's ~/.aws, a
 * CI runner's role) reaches the double, or AWS.
 */
const AWS_VARIABLES = [
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_CREDENTIAL_EXPIRATION',
  'AWS_PROFILE',
  'AWS_DEFAULT_PROFILE',
  'AWS_REGION',
  'AWS_DEFAULT_REGION',
  'AWS_CONFIG_FILE',
  'AWS_SHARED_CREDENTIALS_FILE',
  'AWS_ROLE_ARN',
  'AWS_ROLE_SESSION_NAME',
  'AWS_WEB_IDENTITY_TOKEN_FILE',
  'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
  'AWS_CONTAINER_AUTHORIZATION_TOKEN',
  'AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE',
  'AWS_EC2_METADATA_DISABLED',
  'AWS_ENDPOINT_URL',
  'AWS_ENDPOINT_URL_SECRETS_MANAGER',
  'AWS_ENDPOINT_URL_STS',
  'AWS_IGNORE_CONFIGURED_ENDPOINT_URLS',
  'AWS_MAX_ATTEMPTS',
  'AWS_RETRY_MODE',
] as const;

/** No shared config, no instance metadata: the chain ends quickly when a test gives it nothing. */
const ISOLATED = {
  AWS_CONFIG_FILE: '/nonexistent/token-rotator-test/aws-config',
  AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/token-rotator-test/aws-credentials',
  AWS_EC2_METADATA_DISABLED: 'true',
};

/**
 * Sets the process environment the AWS SDK reads (it reads no other) to `variables` over an
 * isolated base; answers a function that puts the previous environment back.
 */
export function setAwsEnvironment(variables: Record<string, string>): () => void {
  const saved = Object.fromEntries(AWS_VARIABLES.map((name) => [name, process.env[name]]));
  for (const name of AWS_VARIABLES) delete process.env[name];
  Object.assign(process.env, ISOLATED, variables);
  return () => {
    for (const name of AWS_VARIABLES) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  };
}

/** The double's endpoint, region and long-term credentials, as a pod or a CI job would set them. */
export function staticCredentialsEnvironment(double: SecretsManagerDouble): Record<string, string> {
  return {
    AWS_ACCESS_KEY_ID: double.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: double.credentials.secretAccessKey,
    AWS_REGION: double.region,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: double.url,
  };
}

/** Everything a child process (the CLI, the daemon) needs to use the double and nothing else: its environment's AWS part. */
export function childProcessAwsEnvironment(double: SecretsManagerDouble): Record<string, string> {
  return { ...ISOLATED, ...staticCredentialsEnvironment(double) };
}

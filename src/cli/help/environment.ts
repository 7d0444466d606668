// A type only: config/env.js (dotenv and the settings readers) is not loaded to print help.
import type { VARIABLES } from '../../config/env.js';

type Variable = (typeof VARIABLES)[number];

/**
 * One line per variable the tool reads, in the order of VARIABLES: the compiler refuses a variable
 * added to VARIABLES without one (and a line for a variable that is not there).
 */
const DESCRIPTIONS = {
  ROTATOR_CONFIG: 'the policy file, when --config is not given (default config/rotation.yaml)',
  ROTATOR_API_URL: 'the token service base URL, such as https://api.axiom.co',
  ROTATOR_OAUTH_ISSUER: 'OAuth 2.0 issuer, for discovery',
  ROTATOR_OAUTH_TOKEN_URL: 'or a bare token endpoint',
  ROTATOR_OAUTH_CLIENT_ID: 'OAuth client id (client credentials grant)',
  ROTATOR_OAUTH_CLIENT_SECRET: 'OAuth client secret (better as ROTATOR_OAUTH_CLIENT_SECRET_FILE)',
  ROTATOR_OAUTH_SCOPE: 'optional scope parameter',
  ROTATOR_OAUTH_RESOURCE: 'optional RFC 8707 resource parameter',
  ROTATOR_OAUTH_AUTH_METHOD: 'client_secret_basic (default), client_secret_post or private_key_jwt',
  ROTATOR_OAUTH_PRIVATE_KEY: 'the private key for private_key_jwt (as ROTATOR_OAUTH_PRIVATE_KEY_FILE)',
  ROTATOR_ACCESS_TOKEN: 'instead of OAuth: a static bearer, such as a personal access token',
  ROTATOR_ORG_ID: 'sent as x-axiom-org-id (needed with a personal access token)',
  ROTATOR_STATE_DIR: 'state folder (default .token-rotator beside the policy file)',
  ROTATOR_STATE_BACKEND: 'file (default) or kubernetes',
  ROTATOR_STATE_KEY: '32 bytes, base64 or hex: seals the current and staged secrets in state',
  ROTATOR_STATE_KEY_PREVIOUS:
    'earlier state keys, comma-separated: open what they sealed until it is sealed again with ROTATOR_STATE_KEY; `none` accepts state no key authenticates, for one run',
  ROTATOR_STATE_NAMESPACE: 'with the kubernetes backend: the namespace of the state',
  ROTATOR_LEASE_DURATION: 'with the kubernetes backend: how long a Lease lasts (default 15s)',
  ROTATOR_KUBERNETES_EVENTS: 'on (default) or off: Kubernetes Events on the Secrets and workloads a rotation touches',
  ROTATOR_LOG_LEVEL: 'fatal, error, warn, info (default; warn for once, plan and rotate at a terminal, unless -v), debug, trace, silent',
  ROTATOR_LOG_FORMAT: 'auto (default: pretty on a terminal, JSON elsewhere), pretty or json',
  ROTATOR_HTTP_TIMEOUT: 'per request (default 30s)',
  ROTATOR_CONCURRENCY: "names handled at once (default 16; paced by the service's rate-limit headers)",
  ROTATOR_LISTEN: 'the daemon listener, HOST:PORT, :PORT or PORT (default 127.0.0.1:9464)',
} satisfies Record<Variable, string>;

const ALL = Object.keys(DESCRIPTIONS) as Variable[];

const SERVICE: Variable[] = ALL.filter(
  (name) => name === 'ROTATOR_API_URL' || name === 'ROTATOR_ORG_ID' || name === 'ROTATOR_ACCESS_TOKEN' || name.startsWith('ROTATOR_OAUTH_'),
);
/** Read only by the commands that rotate (once, rotate, the daemon): the Events are of their outcomes. */
const ROTATING: Variable[] = ['ROTATOR_KUBERNETES_EVENTS'];
const LOCAL: Variable[] = ALL.filter((name) => !SERVICE.includes(name) && !ROTATING.includes(name) && name !== 'ROTATOR_LISTEN');

/** Which variables a command reads: the service's only when it calls the service, the listener only for the daemon. */
export const VARIABLES_READ = {
  network: [...LOCAL, ...ROTATING, ...SERVICE],
  daemon: [...LOCAL, ...ROTATING, ...SERVICE, 'ROTATOR_LISTEN'],
  local: LOCAL,
  rbac: ['ROTATOR_CONFIG', 'ROTATOR_STATE_BACKEND', 'ROTATOR_STATE_NAMESPACE', 'ROTATOR_KUBERNETES_EVENTS'],
} satisfies Record<string, Variable[]>;

/** The "Environment:" block of a command's help. */
export function environmentHelp(variables: readonly Variable[]): string {
  const width = Math.max(...variables.map((v) => v.length));
  return [
    'Environment (each also as NAME_FILE, a file to read it from; a --dotenv file or ./.env fills in what is unset):',
    ...variables.map((name) => `  ${name.padEnd(width)}  ${DESCRIPTIONS[name]}`),
    "  and the variables the policy's sinks, reloads and notifications name (VAULT_TOKEN, AWS_*, KUBECONFIG...)",
  ].join('\n');
}

/**
 * The words an operator reads when a shared dependency fails: what happened, and what to check
 * first. Text only; the errors that carry it are in `errors.ts`.
 */
import type { Dependency, DependencyFailureKind } from './errors.js';

/** `connection refused (ECONNREFUSED)`: the words first, the code for a search engine. */
export function describeFailureKind(kind: DependencyFailureKind, code?: string): string {
  const words: Record<DependencyFailureKind, string> = {
    'connection-refused': 'connection refused',
    'unknown-host': 'unknown host',
    unreachable: 'network unreachable',
    tls: 'TLS certificate not accepted',
    timeout: 'no answer in time',
    'client-refused': 'the client was refused',
    'access-refused': 'the access token was refused',
    'discovery-failed': 'discovery failed',
    'token-endpoint-failed': 'the token endpoint failed',
    'wrong-base-path': 'no such API at this address',
  };
  return code ? `${words[kind]} (${code})` : words[kind];
}

/** What to check first, by dependency and class. */
export function dependencyCheck(dependency: Dependency, kind: DependencyFailureKind): string {
  const variable = dependency === 'token service' ? 'ROTATOR_API_URL' : 'ROTATOR_OAUTH_ISSUER or ROTATOR_OAUTH_TOKEN_URL';
  switch (kind) {
    case 'connection-refused':
      return `is the ${dependency} running, and is ${variable} (host and port) right?`;
    case 'unknown-host':
      return `is the host name in ${variable} right, and does this machine's DNS resolve it?`;
    case 'unreachable':
      return `can this machine reach the ${dependency} (network, proxy, firewall)?`;
    case 'tls':
      return `does the ${dependency}'s certificate match its host name and chain to a CA this machine trusts (NODE_EXTRA_CA_CERTS)?`;
    case 'timeout':
      return `is the ${dependency} up and answering (ROTATOR_HTTP_TIMEOUT)?`;
    case 'client-refused':
      return 'are ROTATOR_OAUTH_CLIENT_ID and its secret (ROTATOR_OAUTH_CLIENT_SECRET) or key right, and is the client allowed the client credentials grant?';
    case 'access-refused':
      return 'is ROTATOR_ACCESS_TOKEN (or the OAuth client) valid for this service and organisation (ROTATOR_ORG_ID)?';
    case 'discovery-failed':
      return "is ROTATOR_OAUTH_ISSUER the authorization server's issuer (discovery reads ISSUER/.well-known/openid-configuration)? Without discovery, set ROTATOR_OAUTH_TOKEN_URL to the token endpoint instead";
    case 'token-endpoint-failed':
      return 'is the token endpoint right (ROTATOR_OAUTH_TOKEN_URL, or the one ROTATOR_OAUTH_ISSUER advertises), and is the authorization server healthy?';
    case 'wrong-base-path':
      return 'is ROTATOR_API_URL the address the API answers at, without /v2 or another path (requests go to ROTATOR_API_URL/v2/tokens/ID, e.g. https://api.axiom.co/v2/tokens/ID)? If the tokens were replaced outside token-rotator instead, set their new ids in the policy';
  }
}

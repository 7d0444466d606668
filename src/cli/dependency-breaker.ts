import type { TokenServiceClient } from '../api/token-service-client.js';
import { wrongBasePath } from '../api/wrong-base-path.js';
import { ApiError, RotatorError } from '../errors.js';

/** The token service client of one CLI run, and the shared failure that stopped it, if one did. */
export interface GuardedClient {
  api: TokenServiceClient;
  /**
   * The first failure of a shared dependency (unreachable, refusing our credentials), once seen; or,
   * after the run, every token of it answered 404 and nothing else (see `wrongBasePath`).
   */
  tripped(): RotatorError | undefined;
}

/** What the run is about: how many tokens it checks, and where the service is said to be. */
export interface RunScope {
  tokens: number;
  apiUrl: URL;
}

/**
 * After the first failure that every token would meet the same way (the service or the
 * authorization server unreachable, a TLS refusal, credentials refused), the rest of the run's calls
 * fail at once with that same error instead of each retrying against a dependency that is down: a
 * run over 20 tokens then says it once and ends in seconds. Nothing was sent for those calls.
 */
export function guardSharedDependencies(api: TokenServiceClient, scope?: RunScope): GuardedClient {
  let failure: RotatorError | undefined;
  // Ids that answered 404 to a retrieve, and whether anything else was answered at all.
  const notFound = new Set<string>();
  let otherwise = false;
  const guard = async <T>(call: () => Promise<T>, retrievedId?: string): Promise<T> => {
    if (failure) throw failure;
    try {
      const result = await call();
      otherwise = true;
      return result;
    } catch (error) {
      if (error instanceof RotatorError && error.dependencyFailure) failure ??= error;
      if (retrievedId !== undefined && error instanceof ApiError && error.status === 404) notFound.add(retrievedId);
      else otherwise = true;
      throw error;
    }
  };
  /**
   * One token missing is a token replaced outside the rotator; every token of the run missing, and
   * nothing else answered, is the requests missing the API: ids all wrong at once is far less
   * likely than a wrong path. One token alone cannot tell them apart, so it takes two or more.
   */
  const allNotFound = (): RotatorError | undefined =>
    scope && scope.tokens >= 2 && !otherwise && notFound.size >= scope.tokens
      ? wrongBasePath(scope.apiUrl, `all ${scope.tokens} tokens answered 404 (not found), none answered otherwise`, 'retrieve')
      : undefined;
  let basePath: RotatorError | undefined;
  return {
    api: {
      retrieve: (id, options) => guard(() => api.retrieve(id, options), id),
      regenerate: (id, times, options) => guard(() => api.regenerate(id, times, options)),
    },
    tripped: () => failure ?? (basePath ??= allNotFound()),
  };
}

import type { TokenServiceClient } from '../api/token-service-client.js';
import { RotatorError } from '../errors.js';

/** The token service client of one CLI run, and the shared failure that stopped it, if one did. */
export interface GuardedClient {
  api: TokenServiceClient;
  /** The first failure of a shared dependency (unreachable, refusing our credentials), once seen. */
  tripped(): RotatorError | undefined;
}

/**
 * After the first failure that every token would meet the same way (the service or the
 * authorization server unreachable, a TLS refusal, credentials refused), the rest of the run's calls
 * fail at once with that same error instead of each retrying against a dependency that is down: a
 * run over 20 tokens then says it once and ends in seconds. Nothing was sent for those calls.
 */
export function guardSharedDependencies(api: TokenServiceClient): GuardedClient {
  let failure: RotatorError | undefined;
  const guard = async <T>(call: () => Promise<T>): Promise<T> => {
    if (failure) throw failure;
    try {
      return await call();
    } catch (error) {
      if (error instanceof RotatorError && error.dependencyFailure) failure ??= error;
      throw error;
    }
  };
  return {
    api: {
      retrieve: (id, options) => guard(() => api.retrieve(id, options)),
      regenerate: (id, times, options) => guard(() => api.regenerate(id, times, options)),
    },
    tripped: () => failure,
  };
}

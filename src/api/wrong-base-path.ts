import { dependencyCheck } from '../error-advice.js';
import { originOf } from '../error-helpers.js';
import { ApiError, type ApiOperation, type DependencyFailure } from '../errors.js';

/** `http://host/api/v2/tokens/…`: where the requests went, for any token (the id is no part of a shared message). */
export function tokensAddress(apiUrl: string | URL): string {
  try {
    const base = new URL(String(apiUrl));
    const path = base.pathname.endsWith('/') ? base.pathname : `${base.pathname}/`;
    return `${base.origin}${path}v2/tokens/…`;
  } catch {
    return originOf(apiUrl);
  }
}

/**
 * Requests that miss the API (a path such as `/api` or `/v2` appended to ROTATOR_API_URL): every
 * token answers 404, which would otherwise read as each token missing and send the operator to
 * edit ids that are right. One failure for the run, said once, exit 3.
 */
export function wrongBasePath(apiUrl: string | URL, why: string, op: ApiOperation, status = 404): ApiError {
  const dependencyFailure: DependencyFailure = {
    dependency: 'token service',
    kind: 'wrong-base-path',
    target: originOf(apiUrl),
    check: dependencyCheck('token service', 'wrong-base-path'),
  };
  return new ApiError(`${why} (GET ${tokensAddress(apiUrl)}); check ROTATOR_API_URL (base path)`, { op, status, dependencyFailure });
}

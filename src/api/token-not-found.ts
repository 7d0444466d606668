import { ApiError } from '../errors.js';

/**
 * The service said this token does not exist: a 404 in the API's own words. A 404 that never
 * reached the API (a web page: a wrong base path, said as a shared failure) says nothing of the
 * token, so it must not read as "gone" to a reconcile or to the end of earlier tokens.
 */
export const isTokenNotFound = (error: unknown): error is ApiError =>
  error instanceof ApiError && error.status === 404 && error.dependencyFailure === undefined;

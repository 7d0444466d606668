import type { Secret } from '../secret.js';
import type { AccessTokenSource } from './access-token-source.js';

/** A fixed bearer such as a personal access token: nothing to refresh. */
export function staticBearer(token: Secret): AccessTokenSource {
  return {
    getAccessToken: async () => token,
    invalidate: () => false,
  };
}

import type { Secret } from '../secret.js';

/** Where the bearer for the token service comes from. */
export interface AccessTokenSource {
  /** A token valid for now; cached, and fetched once however many callers ask at the same time. */
  getAccessToken(): Promise<Secret>;
  /**
   * The service refused `token` (401): forget it. Answers whether asking again can give a different
   * token, so the caller knows whether one more try makes sense.
   */
  invalidate(token: Secret): boolean;
}

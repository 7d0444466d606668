import type { Got } from 'got';

import type { Clock } from '../clock.js';
import type { AccessTokenSource } from './access-token-source.js';
import type { AuthSettings } from './auth-settings.js';
import { oauthClientCredentials } from './oauth-client-credentials.js';
import { staticBearer } from './static-bearer.js';

export function createAccessTokenSource(
  settings: AuthSettings,
  options: { clock: Clock; timeoutMs: number; http?: Got },
): AccessTokenSource {
  return settings.kind === 'static' ? staticBearer(settings.accessToken) : oauthClientCredentials(settings, options);
}

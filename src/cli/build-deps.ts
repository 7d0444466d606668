import { createTokenServiceClient } from '../api/token-service-client.js';
import { createAccessTokenSource } from '../auth/create-access-token-source.js';
import type { Clock } from '../clock.js';
import type { Settings } from '../config/env.js';
import type { Logger } from '../log/logger.js';
import type { RotationDeps } from '../rotation/deps.js';
import { createSink } from '../sinks/registry.js';
import { fileStateStore } from '../state/file-state-store.js';

/** The one place the side effects are wired together. */
export function buildRotationDeps(settings: Settings, logger: Logger, clock: Clock): RotationDeps {
  const auth = createAccessTokenSource(settings.auth, { clock, timeoutMs: settings.httpTimeoutMs });
  if (settings.auth.kind === 'static' && settings.auth.accessToken.reveal().startsWith('xapt-') && !settings.orgId) {
    logger.warn('ROTATOR_ACCESS_TOKEN is a personal access token; the service also needs ROTATOR_ORG_ID with it');
  }
  const api = createTokenServiceClient({ apiUrl: settings.apiUrl, auth, orgId: settings.orgId, timeoutMs: settings.httpTimeoutMs, clock, logger });
  return { api, state: fileStateStore(settings.stateDir), clock, logger, createSink };
}

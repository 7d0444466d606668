import { createTokenServiceClient } from '../api/token-service-client.js';
import { createAccessTokenSource } from '../auth/create-access-token-source.js';
import type { Clock } from '../clock.js';
import type { Env, Settings } from '../config/env.js';
import type { ApiOperation } from '../errors.js';
import type { Logger } from '../log/logger.js';
import type { Failpoint, RotationDeps } from '../rotation/deps.js';
import { createSink, sinkTarget } from '../sinks/registry.js';
import { fileJournal } from '../state/file-journal.js';
import { fileStateStore } from '../state/file-state-store.js';
import { fileNameLocks } from '../state/name-lock.js';

/**
 * `ROTATOR_TEST_FAILPOINT=step[:n]` kills the process (SIGKILL, as a crash would) the n-th time it
 * reaches `step`. Only the crash-safety tests set it.
 */
function failpointFrom(env: Env): ((step: Failpoint) => void) | undefined {
  const spec = env.ROTATOR_TEST_FAILPOINT;
  if (!spec) return undefined;
  const [step, nth] = spec.split(':');
  let seen = 0;
  return (reached) => {
    if (reached === step && ++seen >= Number(nth ?? 1)) process.kill(process.pid, 'SIGKILL');
  };
}

export interface DepsHooks {
  onResponse?: (op: ApiOperation, status: number | 'error') => void;
}

/** For the commands that stage secrets (once, rotate, daemon): say once that staging will be plain. */
export function warnIfJournalUnsealed(settings: Settings, logger: Logger): void {
  if (!settings.stateKey) {
    logger.warn(
      'ROTATOR_STATE_KEY is not set: a new secret is kept in plaintext (file mode 0600) in the journal from regenerate until every sink has it',
    );
  }
}

/** The one place the side effects are wired together. */
export function buildRotationDeps(settings: Settings, logger: Logger, clock: Clock, env: Env = {}, hooks: DepsHooks = {}): RotationDeps {
  const auth = createAccessTokenSource(settings.auth, { clock, timeoutMs: settings.httpTimeoutMs });
  if (settings.auth.kind === 'static' && settings.auth.accessToken.reveal().startsWith('xapt-') && !settings.orgId) {
    logger.warn('ROTATOR_ACCESS_TOKEN is a personal access token; the service also needs ROTATOR_ORG_ID with it');
  }
  const api = createTokenServiceClient({
    apiUrl: settings.apiUrl,
    auth,
    orgId: settings.orgId,
    timeoutMs: settings.httpTimeoutMs,
    clock,
    logger,
    onResponse: hooks.onResponse,
  });
  const failpoint = failpointFrom(env);
  return {
    api,
    state: fileStateStore(settings.stateDir),
    journal: fileJournal(settings.stateDir),
    locks: fileNameLocks(settings.stateDir, { clock }),
    clock,
    logger,
    createSink,
    sinkTarget,
    stateKey: settings.stateKey,
    ...(failpoint ? { failpoint } : {}),
  };
}

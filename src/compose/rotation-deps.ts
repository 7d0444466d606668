import { existsSync } from 'node:fs';

import { describeSkew, type ServiceClock, serviceClock, SKEW_WARNING_MS } from '../api/service-clock.js';
import { createTokenServiceClient } from '../api/token-service-client.js';
import { createAccessTokenSource } from '../auth/create-access-token-source.js';
import type { Clock } from '../clock.js';
import { formatDuration } from '../common/duration.js';
import { type Env } from '../common/env-variables.js';
import { referenceReader } from '../common/reference.js';
import type { Settings } from '../config/env.js';
import type { ApiOperation } from '../errors.js';
import { createHttpStack } from '../http/http-stack.js';
import type { Logger } from '../log/logger.js';
import { openReloads, type RunReloads } from '../reload/run-reloads.js';
import type { Failpoint, RotationDeps } from '../rotation/deps.js';
import { sinkTypesByName } from '../sinks/registry.js';
import { openSinkSet } from '../sinks/sink-set.js';
import type { StateBackend } from '../state/state-backend.js';
import type { StateStore } from '../state/state-store.js';
import { openState } from './open-state.js';

/**
 * The test hook that kills the process at a protocol step (`ROTATOR_TEST_FAILPOINT=step[:n]`, see
 * src/testing/failpoint.ts). Its module is not in a production build, so there the variable cannot
 * reach it: loaded only when the variable is set and the module exists.
 */
const FAILPOINT_MODULE = new URL('../testing/failpoint.js', import.meta.url);

async function failpointFrom(env: Env, logger: Logger): Promise<((step: Failpoint) => void) | undefined> {
  const spec = env.ROTATOR_TEST_FAILPOINT;
  if (!spec) return undefined;
  if (!existsSync(FAILPOINT_MODULE)) {
    logger.warn('ROTATOR_TEST_FAILPOINT is ignored: this is a production build, without test hooks');
    return undefined;
  }
  // eslint-disable-next-line no-restricted-syntax -- the workspace split replaces this import by path
  const { failpointFrom: fromSpec } = (await import(FAILPOINT_MODULE.href)) as { failpointFrom(spec: string): (step: Failpoint) => void };
  return fromSpec(spec);
}

export interface DepsHooks {
  onResponse?: (op: ApiOperation, status: number | 'error') => void;
  /** Each measurement of the service's clock minus ours. */
  onClockSkew?: (offsetMs: number) => void;
}

/**
 * For the commands that talk to the service and stage secrets: say once what makes this run less
 * safe than it should be.
 */
export function warnAboutUnsafeSettings(settings: Settings, env: Env, logger: Logger): void {
  if (!settings.stateKey) {
    logger.warn(
      'ROTATOR_STATE_KEY is not set: the current secret and a new one are kept in plaintext (file mode 0600) in the state folder',
    );
  }
  if (env.NODE_TLS_REJECT_UNAUTHORIZED === '0') {
    logger.warn('NODE_TLS_REJECT_UNAUTHORIZED=0 turns off TLS certificate checks: the bearer and every new secret could go to an impostor');
  }
}

/** What a command or the daemon runs with, and how to let go of it at the end. */
export interface OpenedDeps {
  deps: RotationDeps;
  /** Where the state lives, for messages. */
  backend: StateBackend;
  /** Runs the reloads of committed rotations: after them, never before. */
  runReloads: RunReloads;
  /** Closes the sink clients this run opened. */
  close(): Promise<void>;
}

/**
 * The one place the side effects are wired together: the service client on the service's clock,
 * the state backend from its registry, and the sinks of this run (each type's client opened on
 * first use).
 */
export async function openRotationDeps(
  settings: Settings,
  logger: Logger,
  clock: Clock,
  env: Env = {},
  hooks: DepsHooks = {},
  /** What relative `*_FILE` paths of referenced credentials are resolved against. */
  cwd: string = process.cwd(),
): Promise<OpenedDeps> {
  // One HTTP stack for the token service and its authorization server: one pool of connections.
  const http = createHttpStack({ timeoutMs: settings.httpTimeoutMs });
  const auth = createAccessTokenSource(settings.auth, { clock, timeoutMs: settings.httpTimeoutMs, http });
  if (settings.auth.kind === 'static' && settings.auth.accessToken.reveal().startsWith('xapt-') && !settings.orgId) {
    logger.warn('ROTATOR_ACCESS_TOKEN is a personal access token; the service also needs ROTATOR_ORG_ID with it');
  }
  let warnedSkew = false;
  const service = serviceClock(clock, (offsetMs) => {
    hooks.onClockSkew?.(offsetMs);
    if (Math.abs(offsetMs) > SKEW_WARNING_MS && !warnedSkew) {
      warnedSkew = true;
      logger.warn(
        { clockSkewMs: offsetMs },
        `the token service's clock is ${describeSkew(offsetMs, formatDuration)} this machine's; times sent to it are corrected to its clock, but fix this machine's clock`,
      );
    }
  });
  const api = createTokenServiceClient({
    apiUrl: settings.apiUrl,
    auth,
    http,
    orgId: settings.orgId,
    timeoutMs: settings.httpTimeoutMs,
    clock: service,
    logger,
    onResponse: hooks.onResponse,
    onServiceDate: service.observe,
  });
  // Lock times are this machine's: the backend gets its own clock, not the service's.
  const backend = await openState(settings, { env, clock, logger });
  const reference = referenceReader(env, cwd);
  const sinks = openSinkSet(sinkTypesByName, { logger, env, reference });
  // Restart times are this machine's, as `kubectl rollout restart` would write them.
  const runReloads = openReloads({ logger, env, clock, reference });
  const failpoint = await failpointFrom(env, logger);
  const deps: RotationDeps = {
    api,
    state: recordingServiceClock(backend.state, service),
    journal: backend.journal,
    locks: backend.locks,
    clock: service,
    clockOffsetMs: service.offsetMs,
    logger,
    sinks,
    stateKey: settings.stateKey,
    previousStateKeys: settings.previousStateKeys,
    ...(failpoint ? { failpoint } : {}),
  };
  return { deps, backend, runReloads, close: () => sinks.close() };
}

/** Every record written carries the skew measured in this run, so `status` can show it offline. */
function recordingServiceClock(store: StateStore, clock: ServiceClock): StateStore {
  return {
    ...store,
    write(record) {
      const offsetMs = clock.offsetMs();
      if (offsetMs === undefined) return store.write(record);
      return store.write({ ...record, serviceClock: { offsetMs: Math.round(offsetMs), measuredAt: clock.now().toISOString() } });
    },
  };
}

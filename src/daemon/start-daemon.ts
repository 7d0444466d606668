import cron from 'node-cron';
import pLimit from 'p-limit';

import type { Clock } from '../clock.js';
import { type Env } from '../common/env-variables.js';
import { openRotationDeps } from '../compose/rotation-deps.js';
import type { Settings } from '../config/env.js';
import type { Policy, TokenPolicy } from '../config/types.js';
import { ConfigError } from '../errors.js';
import type { Logger } from '../log/logger.js';
import type { Notify } from '../notify/notifier.js';
import { describeReload } from '../reload/registry.js';
import { rotatedToken } from '../reload/run-reloads.js';
import { rotateToken } from '../rotation/rotate-token.js';
import { createShutdown } from '../rotation/shutdown.js';
import { findStrayEntries, type StrayEntry } from '../rotation/stray-entries.js';
import { startListener } from './http-listener.js';
import { createMetrics } from './metrics.js';
import { reloadBatch } from './reload-batch.js';
import { CheckScheduler } from './scheduler.js';
import { startupTracker } from './startup-tracker.js';

export interface DaemonOptions {
  settings: Settings;
  policy: Policy;
  /** Posts failures, orphans and (when asked) successes; never throws. */
  notify: Notify;
  /**
   * Reads the policy file again with every check `validate` makes (and the environment read at
   * start); throws a ConfigError when it is invalid.
   */
  reloadPolicy: () => Promise<{ policy: Policy; notify: Notify }>;
  listen: { host: string; port: number };
  logger: Logger;
  clock: Clock;
  env: Env;
}

export interface Daemon {
  url: string;
  /** Reads the policy file again; an invalid one is rejected and the running one kept. */
  reload(): Promise<boolean>;
  /**
   * No new checks, and no new regenerate; waits for the running ones, giving up at the deadline what
   * still waits on the network (never a regenerate already sent). A check stopped so is interrupted,
   * not failed.
   */
  stop(deadlineMs: number): Promise<void>;
}

/**
 * The sidecar: every token checked at start and then on its schedule, by the same protocol as
 * `once` (unfinished journal entries first), backing off after failures, with health, readiness and
 * metrics over HTTP.
 */
export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  const { settings, logger, clock } = options;
  // node-cron logs on its own (missed runs, overlaps): into our JSON log, not beside it.
  const cronLog = logger.child({ component: 'scheduler' });
  cron.setLogger({
    info: (message) => cronLog.debug(message),
    warn: (message) => cronLog.warn(message),
    error: (message, err) => cronLog.error({ err: err ?? message }, typeof message === 'string' ? message : message.message),
    debug: (message) => cronLog.debug({ detail: String(message) }, 'node-cron'),
  });
  const metrics = createMetrics();
  let lastAnswer: { status: number | 'error'; at: Date } | undefined;
  const opened = await openRotationDeps(settings, logger, clock, options.env, {
    onResponse: (op, status) => {
      metrics.observeApi(op, status);
      lastAnswer = { status, at: clock.now() };
    },
    onClockSkew: (offsetMs) => metrics.setClockSkew(offsetMs),
  });
  const { deps } = opened;
  let notify = options.notify;
  let strays: StrayEntry[] = [];
  /** Unfinished rotations of names no longer in the policy: no check touches them, so say so. */
  const findStrays = async (current: Policy) => {
    const found = await findStrayEntries(current, deps.journal).catch((error: unknown) => {
      logger.error({ err: error }, 'cannot list the journal');
      return strays;
    });
    for (const stray of strays) if (!found.some((f) => f.name === stray.name)) metrics.forget(stray.name);
    for (const stray of found) {
      logger.error({ tokenName: stray.name, phase: stray.phase }, stray.message);
      metrics.setPending(stray.name, 1);
    }
    strays = found;
  };
  const shutdown = createShutdown();
  const limit = pLimit(settings.concurrency);
  /** Checks the stop came before: waiting for a slot, never started. */
  let notStarted = 0;
  /** The per-token series of the policy in force, at 0 from the start, and what the state records say. */
  const track = async (current: Policy) => {
    metrics.track(
      current.tokens.map((t) => ({ name: t.name, sinks: t.sinks.map(deps.sinks.describe), reloads: t.reload.map(describeReload) })),
      strays.map((s) => s.name),
    );
    await Promise.all(
      current.tokens.map(async (t) => {
        const record = await deps.state.read(t.name).catch(() => undefined);
        if (record) metrics.seed(t.name, record);
      }),
    );
  };

  const reloads = reloadBatch(opened.runReloads, async (outcome) => {
    metrics.observeReloads(outcome);
    await notify(outcome, clock.now());
  });
  const check = (token: TokenPolicy) =>
    reloads.around(() =>
      limit(async () => {
        if (shutdown.stopping.aborted) {
          notStarted++;
          logger.debug({ tokenName: token.name }, 'not checked: stopping');
          return;
        }
        const outcome = await rotateToken(token, deps, { respectBackoff: true, signal: shutdown.abort, stopping: shutdown.stopping });
        metrics.observeOutcome(outcome, clock.now());
        startup.observe(token, outcome);
        // Its notice waits for its reloads, so that it tells both.
        if (rotatedToken(outcome) && token.reload.length > 0) reloads.add({ token, outcome });
        else await notify(outcome, clock.now());
      }),
    );
  const scheduler = new CheckScheduler(check, logger, (name, next) => metrics.setNextCheck(name, next));
  let policy = options.policy;
  const startup = startupTracker({
    names: () => policy.tokens.map((t) => t.name),
    retry: (token) => {
      if (!shutdown.stopping.aborted && policy.tokens.some((t) => t.name === token.name)) void scheduler.run(token);
    },
  });

  const listener = await startListener({
    ...options.listen,
    registry: metrics.registry,
    state: {
      ready: () => {
        if (strays.length > 0) return { ready: false, reason: strays.map((s) => s.message).join('; ') };
        if (!lastAnswer) return { ready: false, reason: 'no check has reached the token service yet' };
        if (lastAnswer.status === 'error')
          return { ready: false, reason: `the last request to the token service got no answer (${lastAnswer.at.toISOString()})` };
        return {
          ready: true,
          reason: `policy loaded (${policy.tokens.length} token${policy.tokens.length === 1 ? '' : 's'}); the token service answered at ${lastAnswer.at.toISOString()}`,
        };
      },
      started: () => startup.state(),
    },
  });

  await findStrays(policy);
  await track(policy);
  scheduler.schedule(policy.tokens);
  for (const token of policy.tokens) void scheduler.run(token); // the first check, at start

  return {
    url: listener.url,

    async reload() {
      let next;
      try {
        next = await options.reloadPolicy();
      } catch (error) {
        const message = error instanceof ConfigError ? error.message : String((error as Error)?.message ?? error);
        logger.error({ problems: message }, 'the new policy is invalid; keeping the one in force');
        return false;
      }
      policy = next.policy;
      notify = next.notify;
      await findStrays(next.policy);
      await track(next.policy);
      scheduler.schedule(next.policy.tokens);
      logger.info({ tokens: next.policy.tokens.length }, 'policy reloaded');
      return true;
    },

    async stop(deadlineMs) {
      // In-flight steps finish; a request still unanswered at the deadline is given up (never a
      // regenerate sent: see rotation/shutdown.ts), and a journalled intent is reconciled at the
      // next start. A received secret is staged at once.
      logger.info(
        { inProgress: limit.activeCount, notStarted: limit.pendingCount, deadlineMs },
        `stopping: ${limit.activeCount} checks in progress finish, ${limit.pendingCount} waiting are not started`,
      );
      shutdown.stop('stop', deadlineMs);
      try {
        startup.stop();
        await scheduler.stop();
        await reloads.flush();
        if (notStarted > 0) logger.info({ notStarted }, `${notStarted} checks not started because of the stop`);
      } finally {
        shutdown.dispose();
        // close() waits for open connections, and a scraper keeps one alive: end them first.
        const closed = new Promise<void>((resolve) => listener.server.close(() => resolve()));
        listener.server.closeAllConnections();
        await closed;
        await opened.close();
      }
    },
  };
}

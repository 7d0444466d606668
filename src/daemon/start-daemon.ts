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
import { rotatedToken } from '../reload/run-reloads.js';
import { rotateToken } from '../rotation/rotate-token.js';
import { findStrayEntries, type StrayEntry } from '../rotation/stray-entries.js';
import { startListener } from './http-listener.js';
import { createMetrics } from './metrics.js';
import { reloadBatch } from './reload-batch.js';
import { CheckScheduler } from './scheduler.js';

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
  /** No new checks; waits for the running ones, aborting what still waits on the network at the deadline. */
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
  const abort = new AbortController();
  const limit = pLimit(settings.concurrency);

  const reloads = reloadBatch(opened.runReloads, async (outcome) => {
    metrics.observeReloads(outcome);
    await notify(outcome, clock.now());
  });
  const check = (token: TokenPolicy) =>
    reloads.around(() =>
      limit(async () => {
        const outcome = await rotateToken(token, deps, { respectBackoff: true, signal: abort.signal });
        metrics.observeOutcome(outcome, clock.now());
        // Its notice waits for its reloads, so that it tells both.
        if (rotatedToken(outcome) && token.reload.length > 0) reloads.add({ token, outcome });
        else await notify(outcome, clock.now());
      }),
    );
  const scheduler = new CheckScheduler(check, logger, (name, next) => metrics.setNextCheck(name, next));
  let policy = options.policy;

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
          reason: `policy loaded (${policy.tokens.length} tokens); the token service answered at ${lastAnswer.at.toISOString()}`,
        };
      },
    },
  });

  await findStrays(policy);
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
      const names = new Set(next.policy.tokens.map((t) => t.name));
      for (const old of policy.tokens) if (!names.has(old.name)) metrics.forget(old.name);
      policy = next.policy;
      notify = next.notify;
      scheduler.schedule(next.policy.tokens);
      await findStrays(next.policy);
      logger.info({ tokens: next.policy.tokens.length }, 'policy reloaded');
      return true;
    },

    async stop(deadlineMs) {
      // In-flight steps finish; a request still unanswered at the deadline is aborted, and its
      // journalled intent is reconciled at the next start. A received secret is staged at once.
      const deadline = setTimeout(() => abort.abort(), deadlineMs);
      try {
        await scheduler.stop();
        await reloads.flush();
      } finally {
        clearTimeout(deadline);
        // close() waits for open connections, and a scraper keeps one alive: end them first.
        const closed = new Promise<void>((resolve) => listener.server.close(() => resolve()));
        listener.server.closeAllConnections();
        await closed;
        await opened.close();
      }
    },
  };
}

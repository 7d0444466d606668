import { hostname } from 'node:os';

import { type Env } from '../common/env-variables.js';
import { readVariable } from '../common/env-variables.js';
import { webhookUrlProblem } from '../common/reference.js';
import type { ConfigIssue } from '../errors.js';
import { followSameOriginOnly, isRedirect } from '../http/redirect-policy.js';
import { webhookHttp } from '../http/webhook-http.js';
import type { Logger } from '../log/logger.js';
import { describeDrift } from '../policy/sink-drift.js';
import type { TokenOutcome } from '../rotation/outcome.js';
import { scrubSecrets, Secret } from '../secret.js';
import type { NotificationConfig, NotificationEvent } from './notification-config.js';

export interface NotificationTarget {
  config: NotificationConfig;
  url: Secret;
}

export interface Notice {
  event: NotificationEvent;
  token: string;
  at: string;
  host: string;
  summary: string;
  oldId: string;
  newId?: string;
  reason: string;
  error?: { code: string; message: string };
  /** For a `drift` notice: which sinks, and how. */
  drift?: Array<{ sink: string; kind: string }>;
  /** For a failed reload: every reload of the rotation, with its result. */
  reloads?: Array<{ target: string; result: string; message?: string }>;
}

/** The notices an outcome gives: a failure or success, and one per orphan. Nothing secret is in an outcome. */
export function noticesFor(outcome: TokenOutcome, at: Date): Notice[] {
  const base = {
    token: outcome.name,
    at: at.toISOString(),
    host: hostname(),
    oldId: outcome.oldId,
    reason: outcome.reason,
    ...(outcome.newId ? { newId: outcome.newId } : {}),
  };
  const notices: Notice[] = outcome.orphans.map((o) => ({
    ...base,
    event: 'orphan' as const,
    summary: `ORPHANED TOKEN: '${o.name}' was regenerated from ${o.oldId} at about ${o.regeneratedAt} and its secret was lost; delete the orphan in the service's console`,
  }));
  const drift = (outcome.drift ?? []).filter((d) => !d.initial);
  if (drift.length > 0) {
    const repaired = outcome.action === 'rotated' || outcome.action === 'redelivered';
    notices.push({
      ...base,
      event: 'drift',
      summary:
        `token-rotator found that a sink of '${outcome.name}' does not hold its current secret: ${drift.map(describeDrift).join('; ')}` +
        (outcome.action === 'rotated'
          ? '; rotated to deliver a new one everywhere'
          : repaired
            ? '; delivered the current secret to it again (no new token)'
            : ''),
      drift: drift.map(({ sink, kind }) => ({ sink, kind })),
    });
  }
  if (outcome.verification?.result === 'failed') {
    // Its own event: the new token exists and sits in every sink, unverified, while the old one's
    // overlap runs out; someone should look before it does.
    notices.push({
      ...base,
      event: 'verify_failed',
      summary:
        `token-rotator delivered a new token for '${outcome.name}' (${outcome.newId}) but it failed verification ` +
        `(${outcome.verification.check}): ${outcome.verification.message}. Nothing was committed and no consumer reloaded; ` +
        `the old token keeps working until ${outcome.existingTokenExpiresAt}`,
      ...(outcome.error ? { error: outcome.error } : {}),
    });
  } else if (outcome.action === 'failed') {
    notices.push({
      ...base,
      event: 'failure',
      summary: `token-rotator could not rotate '${outcome.name}': ${outcome.reason}`,
      ...(outcome.error ? { error: outcome.error } : {}),
    });
  } else if (outcome.action === 'rotated') {
    const failed = (outcome.reloads ?? []).filter((r) => r.result === 'failed');
    if (failed.length > 0) {
      notices.push({
        ...base,
        event: 'failure',
        summary:
          `token-rotator rotated '${outcome.name}' (${outcome.oldId} -> ${outcome.newId}) but could not reload ` +
          `${failed.map((r) => `${r.target}${r.message ? ` (${r.message})` : ''}`).join('; ')}; the rotation stands: restart or notify by hand`,
        reloads: outcome.reloads!.map(({ target, result, message }) => ({ target, result, ...(message ? { message } : {}) })),
      });
    }
    notices.push({ ...base, event: 'success', summary: `token-rotator rotated '${outcome.name}': ${outcome.oldId} -> ${outcome.newId}` });
  }
  return notices;
}

function body(type: NotificationConfig['type'], notice: Notice): unknown {
  // Slack-compatible incoming webhooks read `text`; the rest of the notice is for generic receivers.
  return type === 'slack' ? { text: scrubSecrets(notice.summary) } : JSON.parse(scrubSecrets(JSON.stringify(notice)));
}

/** Resolves each target's URL from the environment; problems are configuration errors. */
export function resolveTargets(
  configs: readonly NotificationConfig[],
  env: Env,
  cwd: string,
): { targets: NotificationTarget[]; issues: ConfigIssue[] } {
  const targets: NotificationTarget[] = [];
  const issues: ConfigIssue[] = [];
  configs.forEach((config, index) => {
    const path = `notifications[${index}].urlFrom`;
    const read = readVariable(env, config.urlFrom, cwd);
    if ('issue' in read) {
      issues.push(read.issue);
      return;
    }
    const value = read.value;
    if (!value) {
      issues.push({ path, message: `${config.urlFrom} (or ${config.urlFrom}_FILE) is not set` });
      return;
    }
    const problem = webhookUrlProblem(value, config.urlFrom);
    if (problem) {
      issues.push({ path, message: problem });
      return;
    }
    targets.push({ config, url: new Secret(value) });
  });
  return { targets, issues };
}

/**
 * Posts notices to webhooks, retried on network errors and 5xx, never failing a rotation: a
 * notification that cannot be delivered is logged (without its URL) and dropped.
 */
export function createNotifier(
  targets: readonly NotificationTarget[],
  logger: Logger,
  options: { timeoutMs?: number; retries?: number } = {},
) {
  const http = webhookHttp(options);
  return async function notify(outcome: TokenOutcome, at: Date): Promise<void> {
    const notices = noticesFor(outcome, at);
    await Promise.all(
      targets.flatMap((target) =>
        notices
          .filter((n) => target.config.events.includes(n.event))
          .map(async (notice) => {
            try {
              const url = target.url.reveal();
              // The notice, and the URL's own secret path, go to the configured origin or nowhere.
              const response = await http.post(url, { json: body(target.config.type, notice), followRedirect: followSameOriginOnly(url) });
              if (isRedirect(response.statusCode)) {
                logger.warn(
                  { tokenName: notice.token, event: notice.event, target: target.config.urlFrom, status: response.statusCode },
                  'notification not delivered: the webhook answered a redirect to another origin, which is never followed',
                );
              }
            } catch (error) {
              // got's error names the URL: only its code is kept.
              logger.warn(
                {
                  tokenName: notice.token,
                  event: notice.event,
                  target: target.config.urlFrom,
                  code: (error as { code?: string }).code,
                  status: (error as { response?: { statusCode?: number } }).response?.statusCode,
                },
                'notification not delivered',
              );
            }
          }),
      ),
    );
  };
}

export type Notify = ReturnType<typeof createNotifier>;

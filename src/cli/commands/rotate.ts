import { systemClock } from '../../clock.js';
import { formatDuration, parseDuration } from '../../common/duration.js';
import { openEventRecorder, withKubernetesEvents } from '../../compose/kubernetes-events.js';
import { openRotationDeps, warnAboutUnsafeSettings } from '../../compose/rotation-deps.js';
import type { TokenPolicy } from '../../config/types.js';
import { ConfigError, type ConfigIssue } from '../../errors.js';
import { createLogger } from '../../log/logger.js';
import { createNotifier } from '../../notify/notifier.js';
import { needsAttention, type TokenOutcome } from '../../rotation/outcome.js';
import { rotateToken } from '../../rotation/rotate-token.js';
import { confirm } from '../confirm.js';
import { guardSharedDependencies } from '../dependency-breaker.js';
import { type CliIo, EXIT } from '../io.js';
import { type GlobalOptions, loadRuntime } from '../load-runtime.js';
import { shortDate } from '../output/expiry.js';
import { writeRunResult } from '../output/run-result.js';

export interface RotateCommandOptions extends GlobalOptions {
  revokeNow?: boolean;
  overlap?: string;
  yes?: boolean;
  reason?: string;
  json?: boolean;
  heldId?: string;
  /** Finish a staged rotation whose verification failed, without verifying (after a human check). */
  skipVerify?: boolean;
}

/** An emergency waits longer for a scheduled rotation of the same name to finish than `once` does. */
const EMERGENCY_LOCK_WAIT_MS = 30_000;

/**
 * Emergency rotation of the named tokens now, regardless of schedule and backoff. `--revoke-now`
 * ends the old token at once; `--overlap` gives it another grace period (never longer than it had).
 */
export async function rotateCommand(given: string[], options: RotateCommandOptions, io: CliIo): Promise<number> {
  const { settings, policy, notificationTargets, env } = await loadRuntime(options, io);
  // `rotate a a` is one emergency, not two regenerates.
  const names = [...new Set(given)];
  const issues: ConfigIssue[] = [];
  const known = new Map(policy.tokens.map((t) => [t.name, t]));
  for (const name of names) {
    if (!known.has(name))
      issues.push({
        path: `rotate ${name}`,
        message: `no token of that name in the policy; known: ${[...known.keys()].join(', ') || '(none)'}`,
      });
  }
  let overlapMs: number | undefined;
  if (options.revokeNow) overlapMs = 0;
  if (options.overlap !== undefined) {
    const parsed = parseDuration(options.overlap);
    if (parsed.ok) overlapMs = parsed.ms;
    else issues.push({ path: '--overlap', message: parsed.message });
  }
  if (options.heldId !== undefined && names.length !== 1) {
    issues.push({ path: '--held-id', message: 'names the token a held secret belongs to: give exactly one token name with it' });
  }
  if (issues.length > 0) throw new ConfigError(issues);

  const reason = options.reason?.trim() || 'no reason given';
  if (io.stdin?.isTTY && !options.yes) {
    const tokens = names.map((name) => known.get(name)!);
    if (!(await confirm(io, `Rotate ${names.join(', ')} now? ${overlapNotice(tokens, overlapMs, systemClock.now())} [y/N] `))) {
      // Declining is an answer, not a failure.
      io.stderr.write('nothing done\n');
      return EXIT.ok;
    }
  }

  const logger = createLogger({ level: settings.logLevel });
  warnAboutUnsafeSettings(settings, env, logger);
  const opened = await openRotationDeps(settings, logger, systemClock, env, {}, io.cwd);
  const guarded = guardSharedDependencies(opened.deps.api, { tokens: names.length, apiUrl: settings.apiUrl });
  const deps = { ...opened.deps, api: guarded.api };
  logger.warn({ tokens: names, reason, overlapMs: overlapMs ?? null }, 'emergency rotation requested');
  const events = openEventRecorder(settings, { env, logger, clock: systemClock });
  const notify = withKubernetesEvents(createNotifier(notificationTargets, logger), policy, events);
  const rotated = [];
  for (const name of names) {
    const force = overlapMs === undefined ? { reason } : { reason, overlapMs };
    rotated.push(
      await rotateToken(known.get(name)!, deps, {
        force,
        lockWaitMs: EMERGENCY_LOCK_WAIT_MS,
        ...(options.heldId !== undefined ? { heldId: options.heldId } : {}),
        ...(options.skipVerify ? { skipVerify: true } : {}),
      }),
    );
  }
  // The leaked secret stays in every running app until it restarts: reload at once, each workload once.
  const outcomes = await opened.runReloads(rotated.map((outcome) => ({ outcome, token: known.get(outcome.name) })));
  await Promise.all(outcomes.map((o) => notify(o, systemClock.now())));
  await opened.close();
  const { sharedFailure } = writeRunResult('RotateResult', outcomes, {
    policy,
    sinks: deps.sinks,
    tripped: guarded.tripped(),
    json: options.json,
    io,
  });
  if (!options.json) io.stdout.write(overlapAfter(outcomes, known, overlapMs));
  if (sharedFailure) return EXIT.dependency;
  const stillAlive = outcomes.flatMap((o) => o.earlierTokens ?? []).some((t) => t.result === 'still-alive');
  return outcomes.every((o) => o.action === 'rotated' && !needsAttention(o)) && !stillAlive ? EXIT.ok : EXIT.failed;
}

/**
 * Before: how long each current token keeps working once replaced. Without a flag that is the
 * policy's overlap, which an emergency may not want: said, with the way to end it at once.
 */
export function overlapNotice(tokens: TokenPolicy[], overlapMs: number | undefined, now: Date): string {
  if (overlapMs === 0) return 'The current tokens stop working now (--revoke-now).';
  const lines = tokens.map((t) => {
    const ms = overlapMs ?? t.settings.overlapMs;
    const flag = overlapMs === undefined ? 'the policy' : '--overlap';
    return `the current token of ${t.name} keeps working until ${shortDate(new Date(now.getTime() + ms).toISOString())} at most (overlap ${formatDuration(ms)}, from ${flag})`;
  });
  return `${lines.join('; ')}; use --revoke-now to end ${tokens.length === 1 ? 'it' : 'them'} now.`;
}

/** After: the replaced tokens that still work, until when, and how to end them now. */
function overlapAfter(outcomes: TokenOutcome[], known: Map<string, TokenPolicy>, overlapMs: number | undefined): string {
  if (overlapMs === 0) return '';
  return outcomes
    .filter((o) => o.newId && o.existingTokenExpiresAt)
    .map((o) => {
      const ms = overlapMs ?? known.get(o.name)?.settings.overlapMs;
      return `the replaced token ${o.oldId} of ${o.name} keeps working until ${shortDate(o.existingTokenExpiresAt)}${ms !== undefined ? ` (overlap ${formatDuration(ms)})` : ''}; \`token-rotator rotate ${o.name} --revoke-now\` ends it now\n`;
    })
    .join('');
}

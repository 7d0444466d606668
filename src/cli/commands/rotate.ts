import { createInterface } from 'node:readline/promises';

import { systemClock } from '../../clock.js';
import { formatDuration, parseDuration } from '../../common/duration.js';
import { openRotationDeps, warnAboutUnsafeSettings } from '../../compose/rotation-deps.js';
import { ConfigError, type ConfigIssue } from '../../errors.js';
import { createLogger } from '../../log/logger.js';
import { createNotifier } from '../../notify/notifier.js';
import { needsAttention } from '../../rotation/outcome.js';
import { rotateToken } from '../../rotation/rotate-token.js';
import { formatOutcomes } from '../format-outcomes.js';
import { type CliIo, EXIT } from '../io.js';
import { type GlobalOptions, loadRuntime } from '../load-runtime.js';

export interface RotateCommandOptions extends GlobalOptions {
  revokeNow?: boolean;
  overlap?: string;
  yes?: boolean;
  reason?: string;
  json?: boolean;
  heldId?: string;
}

/** An emergency waits longer for a scheduled rotation of the same name to finish than `once` does. */
const EMERGENCY_LOCK_WAIT_MS = 30_000;

async function confirm(io: CliIo, question: string): Promise<boolean> {
  const prompt = createInterface({ input: io.stdin!, output: io.stderr as NodeJS.WritableStream });
  try {
    return /^y(es)?$/i.test((await prompt.question(question)).trim());
  } finally {
    prompt.close();
  }
}

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
    const what =
      overlapMs === undefined
        ? "keep working for the policy's overlap"
        : overlapMs === 0
          ? 'stop working now'
          : `keep working for ${formatDuration(overlapMs)} at most`;
    if (!(await confirm(io, `Rotate ${names.join(', ')} now? The current tokens ${what}. [y/N] `))) {
      io.stderr.write('not rotated\n');
      return EXIT.failed;
    }
  }

  const logger = createLogger({ level: settings.logLevel });
  warnAboutUnsafeSettings(settings, env, logger);
  const opened = await openRotationDeps(settings, logger, systemClock, env, {}, io.cwd);
  const { deps } = opened;
  logger.warn({ tokens: names, reason, overlapMs: overlapMs ?? null }, 'emergency rotation requested');
  const notify = createNotifier(notificationTargets, logger);
  const rotated = [];
  for (const name of names) {
    const force = overlapMs === undefined ? { reason } : { reason, overlapMs };
    rotated.push(
      await rotateToken(known.get(name)!, deps, {
        force,
        lockWaitMs: EMERGENCY_LOCK_WAIT_MS,
        ...(options.heldId !== undefined ? { heldId: options.heldId } : {}),
      }),
    );
  }
  // The leaked secret stays in every running app until it restarts: reload at once, each workload once.
  const outcomes = await opened.runReloads(rotated.map((outcome) => ({ outcome, token: known.get(outcome.name) })));
  await Promise.all(outcomes.map((o) => notify(o, systemClock.now())));
  await opened.close();
  io.stdout.write(options.json ? `${JSON.stringify(outcomes, null, 2)}\n` : formatOutcomes(outcomes));
  const stillAlive = outcomes.flatMap((o) => o.earlierTokens ?? []).some((t) => t.result === 'still-alive');
  return outcomes.every((o) => o.action === 'rotated' && !needsAttention(o)) && !stillAlive ? EXIT.ok : EXIT.failed;
}

import type { ReloadOutcome, TokenOutcome } from '../rotation/outcome.js';
import { type ReloadConfig, reloadTypesByName } from './registry.js';
import type { Reloader, ReloadOpenContext, ReloadRun, RotatedToken } from './reload.js';

/** What the reloads read of a token in the policy: its name and what to reload after it. */
export interface ReloadingToken {
  name: string;
  reload: readonly ReloadConfig[];
}

/** An outcome and the token policy that says what to reload after it (none for a name that left the policy). */
export interface RotatedItem {
  token: ReloadingToken | undefined;
  outcome: TokenOutcome;
}

/**
 * The rotation an outcome committed, as a reload may tell it; undefined when nothing was committed.
 * A redelivery counts when it changed what a sink holds (a Secret re-created with the same value
 * restarts nothing): its consumers may hold nothing, or another secret.
 */
export function rotatedToken(outcome: TokenOutcome): RotatedToken | undefined {
  if (outcome.action === 'redelivered' && outcome.rotationId && outcome.rotatedAt) {
    if (!outcome.sinks.some((s) => (s.result === 'created' || s.result === 'updated') && !s.markerOnly)) return undefined;
    return {
      name: outcome.name,
      id: outcome.oldId,
      expiresAt: outcome.expiresAt,
      rotationId: outcome.rotationId,
      rotatedAt: outcome.rotatedAt,
    };
  }
  if (outcome.action !== 'rotated' || !outcome.newId || !outcome.rotationId || !outcome.rotatedAt) return undefined;
  return {
    name: outcome.name,
    id: outcome.newId,
    expiresAt: outcome.newExpiresAt ?? null,
    rotationId: outcome.rotationId,
    rotatedAt: outcome.rotatedAt,
  };
}

/**
 * Runs the reloads of committed rotations, after the commit and never before: a reload that fails
 * is an outcome to report, and the rotation stands. Each type's client opens on first use; within
 * one call a workload named by several tokens restarts once.
 */
export function openReloads(context: ReloadOpenContext) {
  const clients = new Map<string, Promise<Reloader<ReloadConfig>>>();
  const client = (config: ReloadConfig) => {
    let opened = clients.get(config.type);
    if (!opened) {
      opened = reloadTypesByName[config.type].open(context);
      opened.catch(() => clients.delete(config.type)); // tried again next time, not cached
      clients.set(config.type, opened);
    }
    return opened;
  };

  const runReloads = async function runReloads(
    items: readonly RotatedItem[],
    options: { signal?: AbortSignal } = {},
  ): Promise<TokenOutcome[]> {
    const done = new Map<string, Promise<ReloadOutcome>>();
    const run: ReloadRun = {
      once(key, action) {
        let result = done.get(key);
        if (!result) {
          result = action();
          done.set(key, result);
        }
        return result;
      },
      ...(options.signal ? { signal: options.signal } : {}),
    };
    return Promise.all(
      items.map(async ({ token, outcome }) => {
        const rotated = rotatedToken(outcome);
        if (!rotated || !token || token.reload.length === 0) return outcome;
        const results = await Promise.all(
          token.reload.map(async (config): Promise<ReloadOutcome[]> => {
            try {
              return await (await client(config)).reload(config, rotated, run);
            } catch (error) {
              const target = reloadTypesByName[config.type].describe(config);
              return [{ target, result: 'failed', message: String((error as Error)?.message ?? error) }];
            }
          }),
        );
        const reloads = results.flat();
        for (const reload of reloads.filter((r) => r.result === 'failed')) {
          context.logger.error(
            { tokenName: token.name, target: reload.target, problem: reload.message },
            'reload failed; the rotation stands and is not repeated: restart or notify by hand',
          );
        }
        return { ...outcome, reloads };
      }),
    );
  };
  /** For `validate --online`: `checked`, or `not supported` by this kind of reload; throws what is wrong. */
  const preflight = async (config: ReloadConfig, options: { signal?: AbortSignal } = {}): Promise<'checked' | 'not supported'> => {
    const opened = await client(config);
    if (!opened.preflight) return 'not supported';
    await opened.preflight(config, options);
    return 'checked';
  };
  return Object.assign(runReloads, { preflight });
}

export type RunReloads = ReturnType<typeof openReloads>;

import { systemClock } from '../clock.js';
import { openRotationDeps } from '../compose/rotation-deps.js';
import type { Logger } from '../log/logger.js';
import { describeReload } from '../reload/registry.js';
import { errorSummary } from '../rotation/outcome.js';
import type { Runtime } from './load-runtime.js';
import type { OnlineCheck } from './online-check.js';
import { destinationChecks } from './online-destinations.js';

/**
 * What can be checked against the real systems without changing any of them: the state backend is
 * readable, the service accepts our credentials and knows each token, each sink and reload could be
 * written (a dry run where the API has one, a permission check where it has that). Nothing is
 * written, rotated or restarted.
 */
export async function onlineChecks(runtime: Runtime, logger: Logger): Promise<OnlineCheck[]> {
  const { settings, policy, env, cwd } = runtime;
  const checks: OnlineCheck[] = [];
  let opened;
  try {
    opened = await openRotationDeps(settings, logger, systemClock, env, {}, cwd);
  } catch (error) {
    return [{ check: 'state', target: settings.stateBackend, result: 'failed', note: errorSummary(error).message }];
  }
  const { deps, backend, runReloads } = opened;
  try {
    const strays = await backend.journal.names().then(
      (names) => ({ ok: true as const, names }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    checks.push(
      strays.ok
        ? { check: 'state', target: backend.describe(), result: 'ok', note: `${strays.names.length} unfinished rotation(s)` }
        : { check: 'state', target: backend.describe(), result: 'failed', note: errorSummary(strays.error).message },
    );

    for (const token of policy.tokens) {
      try {
        const record = await deps.state.read(token.name);
        const id = record?.currentId ?? token.id;
        const found = await deps.api.retrieve(id);
        const expires = found.expiresAt ? `expires ${found.expiresAt.toISOString()}` : 'never expires';
        checks.push({ check: 'service', target: `${token.name} (${id})`, result: 'ok', note: expires });
      } catch (error) {
        checks.push({ check: 'service', target: token.name, result: 'failed', note: errorSummary(error).message });
      }
    }

    const sinks = new Map(policy.tokens.flatMap((t) => t.sinks).map((s) => [deps.sinks.target(s), s]));
    for (const sink of sinks.values()) {
      const target = deps.sinks.describe(sink);
      try {
        const result = await deps.sinks.preflight(sink, {});
        checks.push(
          result === 'checked'
            ? { check: 'sink', target, result: 'ok' }
            : { check: 'sink', target, result: 'not checked', note: 'this sink type cannot be checked without writing' },
        );
      } catch (error) {
        checks.push({ check: 'sink', target, result: 'failed', note: errorSummary(error).message });
      }
    }

    checks.push(...(await destinationChecks(policy.tokens, deps.sinks)));

    const reloads = new Map(policy.tokens.flatMap((t) => t.reload).map((r) => [describeReload(r), r]));
    for (const [target, reload] of reloads) {
      try {
        const result = await runReloads.preflight(reload);
        checks.push(
          result === 'checked'
            ? { check: 'reload', target, result: 'ok' }
            : { check: 'reload', target, result: 'not checked', note: 'calling it would be a reload' },
        );
      } catch (error) {
        checks.push({ check: 'reload', target, result: 'failed', note: errorSummary(error).message });
      }
    }
  } finally {
    await opened.close();
  }
  return checks;
}

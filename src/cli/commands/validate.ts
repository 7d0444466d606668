import { relative } from 'node:path';

import { ConfigError } from '../../errors.js';
import { createLogger } from '../../log/logger.js';
import { type StateBackendName, stateBackends } from '../../state/backends/registry.js';
import { formatTable, terminalWidth } from '../format-table.js';
import { type CliIo, EXIT } from '../io.js';
import { type GlobalOptions, loadRuntime } from '../load-runtime.js';
import { type ConfigProblem, envelope, toJson } from '../output/envelope.js';
import { plural } from '../output/expiry.js';

type ValidateOptions = GlobalOptions & { online?: boolean; json?: boolean };

/**
 * Policy and environment checks, no network: exit 0, or 2 with every problem listed. With
 * `--online`, then what can be checked against the real systems without changing them: exit 1 when
 * any of it failed.
 */
export async function validateCommand(options: ValidateOptions, io: CliIo): Promise<number> {
  try {
    return await validate(options, io);
  } catch (error) {
    // A CI step that parses the output gets the envelope for a refused policy too; the text of the
    // problems still goes to stderr, and the exit code stays 2 (both from run.ts).
    if (options.json && error instanceof ConfigError) io.stdout.write(toJson(refusedEnvelope(error, io.cwd)));
    throw error;
  }
}

/** The `Validation` envelope of a refused configuration: what `validate --json` prints whatever refused it. */
export function refusedEnvelope(error: ConfigError, cwd: string) {
  const problems = error.issues.map(({ path, message, line, column }): ConfigProblem => ({
    path,
    message,
    ...(line !== undefined ? { line, column } : {}),
  }));
  const summary = {
    ...(error.policyFile ? { policy: relative(cwd, error.policyFile) || error.policyFile } : {}),
    valid: false,
    online: false,
    // Nothing was checked online; every problem is for a person to fix.
    total: 0,
    needsAttention: problems.length,
  };
  return envelope('Validation', summary, [], problems);
}

async function validate(options: ValidateOptions, io: CliIo): Promise<number> {
  const runtime = await loadRuntime(options, io);
  const { settings, policy, env } = runtime;
  const sinks = policy.tokens.reduce((n, t) => n + t.sinks.length, 0);
  const auth =
    settings.auth.kind === 'static'
      ? `static bearer${settings.orgId ? ` with org id ${settings.orgId}` : ''}`
      : `OAuth client credentials (${settings.auth.method}) for client ${settings.auth.clientId} via ${(settings.auth.issuer ?? settings.auth.tokenUrl)!.href}`;
  const summary = {
    policy: relative(io.cwd, policy.file) || policy.file,
    tokens: policy.tokens.length,
    sinks,
    service: `${settings.apiUrl.href}; ${auth}`,
    state: stateBackends[settings.stateBackend as StateBackendName].where({
      dir: settings.stateDir,
      env,
      hasStateKey: settings.stateKey !== undefined,
    }),
  };
  // The service and sink clients (got, openid-client) are loaded only with --online.
  const checks = options.online
    ? await (await import('../online-checks.js')).onlineChecks(runtime, createLogger({ level: settings.logLevel }))
    : undefined;
  if (options.json) {
    // Without --online the items are empty: the policy and the environment were read, nothing was reached.
    const items = checks ?? [];
    const counts = { total: items.length, needsAttention: items.filter((c) => c.result === 'failed').length };
    io.stdout.write(toJson(envelope('Validation', { ...summary, valid: true, online: checks !== undefined, ...counts }, items)));
  } else {
    io.stdout.write(
      `policy ${summary.policy}: ${plural(summary.tokens, 'token')}, ${plural(sinks, 'sink')}\nservice ${summary.service}\nstate ${summary.state}\n` +
        (checks
          ? `\n${formatTable(
              ['CHECK', 'TARGET', 'RESULT', 'NOTE'],
              checks.map((c) => [c.check, c.target, c.result, c.note ?? '']),
              { width: terminalWidth(io.stdout), flexible: [1, 3] },
            )}`
          : ''),
    );
  }
  if (!checks) return EXIT.ok;
  return checks.some((c) => c.result === 'failed') ? EXIT.failed : EXIT.ok;
}

import { relative } from 'node:path';

import { type StateBackendName, stateBackends } from '../../state/backends/registry.js';
import { type CliIo, EXIT } from '../io.js';
import { type GlobalOptions, loadRuntime } from '../load-runtime.js';

/** Policy and environment checks, no network: exit 0, or 2 with every problem listed. */
export async function validateCommand(options: GlobalOptions, io: CliIo): Promise<number> {
  const { settings, policy, env } = await loadRuntime(options, io);
  const sinks = policy.tokens.reduce((n, t) => n + t.sinks.length, 0);
  const auth =
    settings.auth.kind === 'static'
      ? `static bearer${settings.orgId ? ` with org id ${settings.orgId}` : ''}`
      : `OAuth client credentials (${settings.auth.method}) for client ${settings.auth.clientId} via ${(settings.auth.issuer ?? settings.auth.tokenUrl)!.href}`;
  io.stdout.write(
    `policy ${relative(io.cwd, policy.file) || policy.file}: ${policy.tokens.length} token(s), ${sinks} sink(s)\n` +
      `service ${settings.apiUrl.href}; ${auth}\n` +
      `state ${stateBackends[settings.stateBackend as StateBackendName].where({ dir: settings.stateDir, env, hasStateKey: settings.stateKey !== undefined })}\n`,
  );
  return EXIT.ok;
}

import type { SinkType } from '../sink.js';
import { describeExec, type ExecSinkConfig, parseExecSinkConfig } from './exec-sink-config.js';

export type { ExecSinkConfig };

/**
 * A program of the user's, for any destination token-rotator has no sink for: the secret on its
 * stdin (never in argv or its environment), the token's name, id, expiry and rotation id in
 * `TOKEN_ROTATOR_*` variables, no shell, a timeout. An optional `read` program prints what the
 * destination holds, so drift is noticed; without it the sink is write-only.
 */
export const execSinkType: SinkType<ExecSinkConfig> = {
  type: 'exec',
  parse: parseExecSinkConfig,
  // One program with the same arguments is one destination: a second token would overwrite the first.
  target: (config) => `exec:${JSON.stringify(config.command)}`,
  describe: describeExec,
  readable: (config) => config.read !== undefined,
  async open(context) {
    const { execSinkClient } = await import('./exec-client.js');
    return execSinkClient(context);
  },
};

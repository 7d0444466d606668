import { type Command, InvalidArgumentError, Option } from 'commander';

import type { EmulatorIo } from './io.js';

function integer(min: number, max: number) {
  return (value: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}`);
    return n;
  };
}

const EMULATOR_DESCRIPTION =
  'serve a local double of the token service and its OAuth server, for demos and CI (not in the container image)';

/**
 * The emulator's options and action, on the command given (`token-rotator-emulator` itself, or a
 * test's own program). The action loads the servers only when they are asked for.
 */
export function defineEmulatorCommand(command: Command, io: EmulatorIo, done: (exitCode: number) => void): Command {
  return command
    .description(EMULATOR_DESCRIPTION)
    .addOption(new Option('--host <host>', 'loopback address to listen on').default('127.0.0.1'))
    .addOption(new Option('--port <port>', 'port (0: any free port)').default(0).argParser(integer(0, 65535)))
    .option('--seed <file>', 'tokens, clients and knobs to start with (YAML or JSON)')
    .option('--env-out <file>', 'write the ROTATOR_* settings a rotator needs, client secret included, to this 0600 file')
    .addOption(new Option('--latency <ms>', 'delay every API answer').argParser(integer(0, 60_000)))
    .addOption(new Option('--rate-limit <n>', 'requests per minute per caller before 429').argParser(integer(1, 1_000_000)))
    .option('--kubernetes <kubeconfig>', 'also serve a Kubernetes API double, and write a kubeconfig for it (0600) to this file')
    .addOption(
      new Option('--namespaces <list>', 'the namespaces the Kubernetes double has, besides default (comma-separated)').default(
        'token-rotator,apps',
      ),
    )
    .action(async (options) => {
      // Loaded only here: the authorization server is heavy.
      const { emulatorCommand } = await import('./emulator-command.js');
      done(await emulatorCommand(options, io));
    });
}

import { readFileSync } from 'node:fs';

import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';

import { ConfigError, RotatorError } from '../errors.js';
import { chooseLogOutput, LOG_FORMATS, type LogFormat, setLogOutput } from '../log/logger.js';
import { scrubSecrets } from '../secret.js';
import { onceCommand } from './commands/once.js';
import { planCommand } from './commands/plan.js';
import { validateCommand } from './commands/validate.js';
import { type CliIo, EXIT } from './io.js';
import { DEFAULT_POLICY_PATH, type GlobalOptions } from './load-runtime.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

function integer(min: number, max: number) {
  return (value: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}`);
    return n;
  };
}

/**
 * Node.js reads `--env-file` wherever it appears in argv, before this code runs: a missing file ends
 * the process with Node's exit code 9. The tool's own option is `--dotenv`; the other name is refused
 * with a pointer to it when it does reach us.
 */
function refuseNodeOptions(argv: readonly string[]): void {
  const given = argv.find((arg) => /^--env-file(?:-if-exists)?(?:=|$)/.test(arg));
  if (given) {
    throw new ConfigError([
      {
        path: given.split('=')[0]!,
        message: 'is an option of Node.js itself, which reads the file before token-rotator starts; use --dotenv FILE',
      },
    ]);
  }
}

/**
 * The whole CLI as a function of its arguments and environment, returning the exit code:
 * 0 done, 1 some token failed, 2 usage or configuration error (before any network call).
 */
export async function run(argv: string[], io: CliIo): Promise<number> {
  let exitCode: number = EXIT.ok;
  const program = new Command('token-rotator')
    .description('Keeps API tokens rotated: regenerates the due ones with an overlap and delivers each new secret to its sinks.')
    .version(version)
    .option('-c, --config <path>', `policy file (else ROTATOR_CONFIG, else ${DEFAULT_POLICY_PATH})`)
    .option('--dotenv <path>', 'read environment variables from this dotenv file (else ./.env when present)')
    .addOption(
      new Option('--log-format <format>', 'logs on stderr: pretty lines on a terminal and JSON elsewhere (auto), or always one')
        .choices(LOG_FORMATS)
        .env('ROTATOR_LOG_FORMAT')
        .default('auto'),
    )
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    });

  const global = () => program.opts<GlobalOptions>();
  program.hook('preAction', () => {
    setLogOutput(chooseLogOutput(program.opts<{ logFormat: LogFormat }>().logFormat, io.stderr, io.env));
  });

  program
    .command('once')
    .description('one pass over every token: rotate the due ones (for a CronJob or by hand)')
    .option('--json', 'print the outcome as JSON')
    .action(async (options: { json?: boolean }) => {
      exitCode = await onceCommand({ ...global(), ...options }, io);
    });

  program
    .command('plan')
    .description('show what once would do now, changing nothing')
    .option('--json', 'print a JSON array of {name, id, expiresAt, action, reason, dueAt}')
    .action(async (options: { json?: boolean }) => {
      exitCode = await planCommand({ ...global(), ...options }, io);
    });

  program
    .command('daemon')
    .description('the sidecar: check every token on its schedule, serve /healthz, /readyz and /metrics')
    .option('--listen <host:port>', 'HTTP listener (else ROTATOR_LISTEN, else 127.0.0.1:9464)')
    .action(async (options: { listen?: string }) => {
      const { daemonCommand } = await import('./commands/daemon.js');
      exitCode = await daemonCommand({ ...global(), ...options }, io);
    });

  program
    .command('rotate')
    .description('emergency rotation of the named tokens now, regardless of schedule and backoff')
    .argument('<name...>', 'token names from the policy')
    .addOption(new Option('--revoke-now', 'end the current token at once (overlap 0)').conflicts('overlap'))
    .option('--overlap <duration>', 'how long the current token keeps working (never longer than it would have)')
    .option('-y, --yes', 'do not ask for confirmation on a terminal')
    .option('--reason <text>', 'why: written to the audit log')
    .option('--json', 'print the outcome as JSON')
    .option('--held-id <id>', "deliver a secret held in the journal as this token (its id from the service's console)")
    .action(async (names: string[], options) => {
      const { rotateCommand } = await import('./commands/rotate.js');
      exitCode = await rotateCommand(names, { ...global(), ...options }, io);
    });

  program
    .command('status')
    .description('per token: current id, expiry, last rotation, next due time, pending deliveries, last error (no network)')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const { statusCommand } = await import('./commands/status.js');
      exitCode = await statusCommand({ ...global(), ...options }, io);
    });

  program
    .command('validate')
    .description(
      'check the policy and the environment, without the network (with --online, also against the real systems, changing nothing)',
    )
    .option('--online', 'also check the state, the service, every sink and every reload, without writing anything (exit 1 when one fails)')
    .option('--json', 'print what was checked as JSON')
    .action(async (options: { online?: boolean; json?: boolean }) => {
      exitCode = await validateCommand({ ...global(), ...options }, io);
    });

  program
    .command('emulator')
    .description('serve a local double of the token service and its OAuth server, for demos and CI')
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
      // Loaded only here: the authorization server is heavy and the rotator itself never needs it.
      const { emulatorCommand } = await import('./commands/emulator.js');
      exitCode = await emulatorCommand(options, io);
    });

  try {
    refuseNodeOptions(argv);
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (error instanceof ConfigError) {
      io.stderr.write(`token-rotator: ${scrubSecrets(error.message)}\n`);
      return EXIT.usage;
    }
    const message =
      error instanceof RotatorError ? `${error.code}: ${error.message}` : `unexpected error: ${(error as Error)?.stack ?? error}`;
    io.stderr.write(`token-rotator: ${scrubSecrets(message)}\n`);
    return EXIT.failed;
  }
}

import { existsSync } from 'node:fs';

import { Argument, Command, CommanderError, Option } from 'commander';

import { ConfigError, RotatorError } from '../errors.js';
import { chooseLogOutput, LOG_FORMATS, type LogFormat, setLogOutput } from '../log/logger.js';
import { scrubSecrets } from '../secret.js';
import { packageVersion } from '../version.js';
import { completionScript, SHELLS } from './completion.js';
import { commandHelp, type HelpedCommand, programHelp } from './help/command-help.js';
import { jsonOptionHelp } from './help/json-option.js';
import { type CliIo, EXIT } from './io.js';
import type { GlobalOptions } from './load-runtime.js';
import { oneShotLogLevel, VERBOSE_HELP } from './one-shot-log-level.js';
import { DEFAULT_POLICY_PATH } from './policy-path.js';

/**
 * The emulator is a development tool with its own entry point (`token-rotator-emulator`); the
 * production image leaves it out. Here it is loaded only when asked for, and only where it exists.
 */
const EMULATOR_PROGRAM = new URL('../emulator/cli/emulator-program.js', import.meta.url);

/** The shape of src/emulator/cli/emulator-program.ts, not imported: a production build must not compile it in. */
interface EmulatorProgram {
  defineEmulatorCommand(command: Command, io: CliIo, done: (exitCode: number) => void): Command;
}

async function emulatorProgram(): Promise<EmulatorProgram | undefined> {
  if (!existsSync(EMULATOR_PROGRAM)) return undefined;
  // eslint-disable-next-line no-restricted-syntax -- the workspace split replaces this import by path
  return (await import(EMULATOR_PROGRAM.href)) as EmulatorProgram;
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
 * Command results are scrubbed of every known secret value on their way out, as log lines and
 * stderr are: a table or a JSON document carries error text from services and sinks, and a last line
 * of defence belongs on every stream, not on each of the places that print.
 */
function scrubbedOutput(io: CliIo): CliIo {
  const stdout = io.stdout;
  return {
    ...io,
    stdout: {
      write: (text: string) => stdout.write(scrubSecrets(text)),
      get isTTY() {
        return stdout.isTTY;
      },
      get columns() {
        return stdout.columns;
      },
    },
  };
}

/**
 * The whole CLI as a function of its arguments and environment, returning the exit code:
 * 0 done, 1 some token failed, 2 usage or configuration error (before any network call).
 */
export async function run(argv: string[], given: CliIo): Promise<number> {
  const io = scrubbedOutput(given);
  let exitCode: number = EXIT.ok;
  const program = new Command('token-rotator')
    .description('Keeps API tokens rotated: regenerates the due ones with an overlap and delivers each new secret to its sinks.')
    .version(packageVersion())
    .option('-c, --config <path>', `policy file (else ROTATOR_CONFIG, else ${DEFAULT_POLICY_PATH})`)
    .option('--dotenv <path>', 'read environment variables from this dotenv file (else ./.env when present)')
    .addOption(
      new Option('--log-format <format>', 'logs on stderr: pretty lines on a terminal and JSON elsewhere (auto), or always one')
        .choices(LOG_FORMATS)
        .env('ROTATOR_LOG_FORMAT')
        .default('auto'),
    )
    .configureHelp({ showGlobalOptions: true })
    .addHelpText('after', () => programHelp())
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
    .option('--json', jsonOptionHelp('RunResult', 'the outcome'))
    .option('-v, --verbose', VERBOSE_HELP)
    .action(async (options: { json?: boolean; verbose?: boolean }) => {
      const { onceCommand } = await import('./commands/once.js');
      exitCode = await onceCommand({ ...global(), ...options, defaultLogLevel: oneShotLogLevel(io.stderr, options.verbose) }, io);
    });

  program
    .command('plan')
    .description('show what once would do now, changing nothing')
    .option('--json', jsonOptionHelp('PlanResult', 'the decisions'))
    .option('-v, --verbose', VERBOSE_HELP)
    .action(async (options: { json?: boolean; verbose?: boolean }) => {
      const { planCommand } = await import('./commands/plan.js');
      exitCode = await planCommand({ ...global(), ...options, defaultLogLevel: oneShotLogLevel(io.stderr, options.verbose) }, io);
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
    .option('--json', jsonOptionHelp('RotateResult', 'the outcome'))
    .option('--held-id <id>', "deliver a secret held in the journal as this token (its id from the service's console)")
    .option(
      '--skip-verify',
      'finish a staged rotation whose new token failed verification, without verifying it (after checking it by hand)',
    )
    .option('-v, --verbose', VERBOSE_HELP)
    .action(async (names: string[], options: { verbose?: boolean }) => {
      const { rotateCommand } = await import('./commands/rotate.js');
      const defaultLogLevel = oneShotLogLevel(io.stderr, options.verbose);
      exitCode = await rotateCommand(names, { ...global(), ...options, defaultLogLevel }, io);
    });

  program
    .command('status')
    .description(
      'per token: current id, expiry, last rotation, next due time, pending deliveries, last error (from the state and the sinks: no token service, no credentials, no state key)',
    )
    .option('--json', `${jsonOptionHelp('Status', 'each token')}; with --watch, one compact envelope per line`)
    .option('--name <names>', 'only these tokens (repeatable, or comma-separated)', (value: string, given: string[] = []) => [
      ...given,
      value,
    ])
    .option('--watch <seconds>', 'read again every so many seconds (or a duration: 30s, 2m) until Ctrl-C or SIGTERM')
    .action(async (options: { json?: boolean; name?: string[]; watch?: string }) => {
      const { statusCommand } = await import('./commands/status.js');
      // It reads state and sinks only: no service URL, credentials, notification URLs or state key are needed.
      exitCode = await statusCommand({ ...global(), ...options, service: 'unused', stateSecrets: 'unused' }, io);
    });

  program
    .command('state')
    .description("look after the saved state of a token: forget one name's record and journal entry")
    .command('forget')
    .description(
      "reset one name's saved state (record and journal entry) after a confirmation; refused while a new secret waits to be delivered",
    )
    .argument('<name>', 'the token name (also one no longer in the policy)')
    .option('-y, --yes', 'do not ask for confirmation (needed without a terminal)')
    .action(async (name: string, options: { yes?: boolean }) => {
      const { stateForgetCommand } = await import('./commands/state-forget.js');
      // Nothing is sealed or unsealed: no service settings and no state key are needed.
      exitCode = await stateForgetCommand(name, { ...global(), ...options, service: 'unused', stateSecrets: 'unused' }, io);
    });

  program
    .command('validate')
    .description(
      'check the policy and the environment, without the network (with --online, also against the real systems, changing nothing)',
    )
    .option('--online', 'also check the state, the service, every sink and every reload, without writing anything (exit 1 when one fails)')
    .option('--json', jsonOptionHelp('Validation', 'what was checked, or every problem found,'))
    .action(async (options: { online?: boolean; json?: boolean }) => {
      const { validateCommand } = await import('./commands/validate.js');
      exitCode = await validateCommand({ ...global(), ...options }, io);
    });

  program
    .command('rbac')
    .description(
      "print the least-privilege Kubernetes Roles for the policy: its sinks', reloads' and state's objects, by name (no network)",
    )
    .option(
      '-n, --namespace <namespace>',
      "the rotator's namespace: its ServiceAccount's and the default of the state, sinks and reloads (else the pod's or the kubeconfig context's)",
    )
    .option('--service-account <name>', 'the ServiceAccount the rotator runs as; the Roles are named after it', 'token-rotator')
    .option('--json', jsonOptionHelp('Rbac', 'the Roles and RoleBindings'))
    .action(async (options: { namespace?: string; serviceAccount?: string; json?: boolean }) => {
      const { rbacCommand } = await import('./commands/rbac.js');
      exitCode = await rbacCommand({ ...global(), ...options }, io);
    });

  const emulator = program
    .command('emulator')
    .description(
      'serve a local double of the token service and its OAuth server, for demos and CI (a development tool: also token-rotator-emulator)',
    );
  // Its options live with it; loaded only when the command line names it (or a completion script is made).
  const emulatorCli = argv.includes('emulator') || argv.includes('completion') ? await emulatorProgram() : undefined;
  if (emulatorCli) {
    emulatorCli.defineEmulatorCommand(emulator, io, (code) => (exitCode = code));
  } else {
    emulator
      .helpOption(false)
      .allowUnknownOption()
      .allowExcessArguments()
      .action(() => {
        throw new ConfigError([
          {
            path: 'emulator',
            message:
              'is not part of this installation (the container image leaves the test bench out); run it from an npm install or a checkout: npx token-rotator-emulator',
          },
        ]);
      });
  }

  program
    .command('completion')
    .description('print a shell completion script (bash, zsh or fish)')
    .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
    .action((shell: (typeof SHELLS)[number]) => {
      io.stdout.write(completionScript(shell, program));
    });

  for (const command of program.commands) command.addHelpText('after', () => commandHelp(command.name() as HelpedCommand));

  try {
    refuseNodeOptions(argv);
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError && error.exitCode !== 0 && wantsValidationJson(argv)) {
      // A usage error (a flag, or a variable commander checks) refuses the configuration too: a CI
      // step parsing `validate --json` gets the envelope, as for a refused policy.
      const path = /\b(ROTATOR_[A-Z_]+)\b/.exec(error.message)?.[1];
      const refused = new ConfigError([{ path: path ? `env.${path}` : 'argv', message: error.message.replace(/^error: /, '') }]);
      const [{ refusedEnvelope }, { toJson }] = await Promise.all([import('./commands/validate.js'), import('./output/envelope.js')]);
      io.stdout.write(toJson(refusedEnvelope(refused, io.cwd)));
    }
    return reportError(error, io);
  }
}

/** `validate` with `--json` among the arguments (before or after the command). */
const wantsValidationJson = (argv: readonly string[]): boolean => argv.includes('validate') && argv.includes('--json');

/** The exit code for what a command threw, said on stderr: one line, no stack trace unless unexpected. */
export function reportError(error: unknown, io: Pick<CliIo, 'stderr'>): number {
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

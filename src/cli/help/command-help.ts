import type { EXIT } from '../io.js';
import { environmentHelp, VARIABLES_READ } from './environment.js';
import { exitCodesHelp } from './exit-codes.js';

interface CommandHelp {
  examples: string[];
  variables: keyof typeof VARIABLES_READ | 'none';
  /** What an exit code means for this command, where it says more than the general meaning. */
  exits?: Partial<Record<keyof typeof EXIT, string>>;
  /** The codes this command can end with, when not all of them. */
  codes?: Array<keyof typeof EXIT>;
}

const HELP = {
  once: {
    examples: [
      'token-rotator once --config rotation.yaml',
      'token-rotator once --json --log-format json     # for CI: results on stdout, JSON logs on stderr',
      "token-rotator once --json | jq -e '.summary.needsAttention == 0'   # a CI gate; plan, rotate and status alike",
    ],
    variables: 'network',
  },
  plan: {
    examples: ['token-rotator plan', 'token-rotator plan --json | jq \'.items[] | select(.action == "rotate")\''],
    variables: 'network',
    exits: {
      ok: 'the plan was made (whatever it says is due)',
      failed: "a token could not be checked, or one of its sinks could not be read or holds what no run can repair (another tool's secret)",
    },
  },
  daemon: {
    examples: [
      'token-rotator daemon                       # listens on 127.0.0.1:9464',
      'token-rotator daemon --listen :9464        # every interface, for Prometheus in a cluster',
      'curl -s localhost:9464/metrics',
    ],
    variables: 'daemon',
    exits: {
      ok: 'stopped by SIGTERM or SIGINT',
      interrupted: 'a SIGINT during the graceful stop: exited at once; the next start finishes what was started',
      terminated: 'a SIGTERM during the graceful stop: as for SIGINT',
    },
  },
  rotate: {
    examples: [
      'token-rotator rotate ingest-prod --revoke-now --reason "pasted in a public channel"',
      'token-rotator rotate ingest-prod query-dashboard --overlap 10m --yes',
    ],
    variables: 'network',
    exits: { ok: 'every named token was rotated, or the confirmation was declined' },
  },
  status: {
    examples: [
      'token-rotator status                              # no state key or service credentials needed',
      'token-rotator status --name ingest-prod,query --json',
      "token-rotator status --json --watch 30 | jq -c '.summary'   # one JSON envelope per line until Ctrl-C",
    ],
    variables: 'local',
    exits: {
      ok: 'no token has an error, a pending delivery or a drifted sink; with --watch: stopped by SIGINT or SIGTERM',
      failed: 'some token has an error, a pending delivery or a drifted sink (each one is named)',
    },
    codes: ['ok', 'failed', 'usage'],
  },
  state: {
    examples: [
      'token-rotator state forget ingest-prod          # asks first; the next run starts it again from the policy id',
      'token-rotator state forget old-name --yes       # a name no longer in the policy, without asking',
    ],
    variables: 'local',
    exits: {
      ok: 'forgotten, nothing was saved for the name, or the confirmation was declined',
      failed: 'refused: a rotation holds the name, or its journal holds a new secret not yet delivered (deliver it first)',
      usage: 'no terminal to confirm on and no --yes, or the configuration was refused',
    },
    codes: ['ok', 'failed', 'usage'],
  },
  validate: {
    examples: ['token-rotator validate --config rotation.yaml', 'token-rotator validate --online --json'],
    variables: 'network',
    exits: {
      ok: 'the policy and the environment are valid',
      failed: 'with --online: a check failed (each one is named)',
      usage:
        'the policy or the environment was refused: every problem is listed with its path (with --json, on stdout too, with its line and column in the policy where known)',
    },
  },
  rbac: {
    examples: [
      'ROTATOR_STATE_BACKEND=kubernetes token-rotator rbac --config rotation.yaml --namespace token-rotator > rbac.yaml',
      'token-rotator rbac --namespace apps --service-account ingest-rotator | kubectl apply -f -',
    ],
    variables: 'rbac',
    exits: { ok: 'the Roles were printed (or that there is nothing to grant)' },
    codes: ['ok', 'usage'],
  },
  completion: {
    examples: [
      'source <(token-rotator completion bash)                              # bash, this shell',
      'token-rotator completion zsh > "${fpath[1]}/_token-rotator"            # zsh',
      'token-rotator completion fish > ~/.config/fish/completions/token-rotator.fish',
    ],
    variables: 'none',
    exits: { ok: 'the script was printed', usage: 'no such shell' },
    codes: ['ok', 'usage'],
  },
} satisfies Record<string, CommandHelp>;

export type HelpedCommand = keyof typeof HELP;

/** Examples, the environment the command reads, and its exit codes: the text after its options. */
export function commandHelp(command: HelpedCommand): string {
  const help: CommandHelp = HELP[command];
  return [
    '',
    'Examples:',
    ...help.examples.map((e) => `  ${e}`),
    ...(help.variables === 'none' ? [] : ['', environmentHelp(VARIABLES_READ[help.variables])]),
    '',
    exitCodesHelp(help.exits, help.codes),
  ].join('\n');
}

/** After the program's own help: where to start, and the exit codes. */
export function programHelp(): string {
  return [
    '',
    'Examples:',
    '  token-rotator validate --config rotation.yaml   # check a policy, no network',
    '  token-rotator plan                              # what is due, changing nothing',
    '  token-rotator once                              # rotate what is due',
    "  token-rotator <command> --help                  # a command's options, environment and exit codes",
    '',
    exitCodesHelp(),
  ].join('\n');
}

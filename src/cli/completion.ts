import type { Command, Option } from 'commander';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** What a completion needs to know of one option: read from the program, so it never drifts from it. */
interface OptionSpec {
  short: string | undefined;
  long: string;
  description: string;
  /** The option takes a value: a file (complete paths), one of `choices`, or free text. */
  value: 'none' | 'file' | 'choice' | 'text';
  choices: string[];
}

interface CommandSpec {
  name: string;
  description: string;
  options: OptionSpec[];
  /** Values of its first argument, when they are a fixed list (`completion bash|zsh|fish`). */
  argumentChoices: string[];
}

/** Values named like these are paths. */
const FILE_VALUE = /<(path|file|kubeconfig)>/;

function optionSpec(option: Option): OptionSpec | undefined {
  if (!option.long || option.hidden) return undefined;
  const choices = option.argChoices ?? [];
  const value = !option.required && !option.optional ? 'none' : choices.length ? 'choice' : FILE_VALUE.test(option.flags) ? 'file' : 'text';
  // The first sentence or clause: enough to choose by, short enough for a menu.
  const description = option.description.split(/[(:;]/)[0]!.trim();
  return { short: option.short, long: option.long, description, value, choices };
}

const optionsOf = (command: Command) => command.options.map(optionSpec).filter((o): o is OptionSpec => o !== undefined);

function specOf(program: Command): { global: OptionSpec[]; commands: CommandSpec[] } {
  const help: OptionSpec = { short: '-h', long: '--help', description: 'show help', value: 'none', choices: [] };
  return {
    global: [...optionsOf(program), help],
    commands: program.commands.map((command) => ({
      name: command.name(),
      description: command.description().split(/[(:;]/)[0]!.trim(),
      options: optionsOf(command),
      argumentChoices: command.registeredArguments[0]?.argChoices ?? [],
    })),
  };
}

const singleQuoted = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

function bash(program: Command, name: string): string {
  const { global, commands } = specOf(program);
  const fn = `_${name.replace(/[^A-Za-z0-9]/g, '_')}`;
  const flags = (options: OptionSpec[]) => options.flatMap((o) => [o.long, ...(o.short ? [o.short] : [])]).join(' ');
  const all = [...global, ...commands.flatMap((c) => c.options)];
  const valueCases = [
    ...new Map(
      all
        .filter((o) => o.value === 'file' || o.value === 'choice')
        .map((o) => [
          o.long,
          `    ${[o.long, ...(o.short ? [o.short] : [])].join('|')}) COMPREPLY=($(compgen ${o.value === 'file' ? '-f' : `-W ${singleQuoted(o.choices.join(' '))}`} -- "$cur")); return ;;`,
        ]),
    ).values(),
  ];
  const textOptions = all.filter((o) => o.value === 'text').flatMap((o) => [o.long, ...(o.short ? [o.short] : [])]);
  return `# bash completion for ${name}: source <(${name} completion bash)
${fn}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}"
  local commands=${singleQuoted(commands.map((c) => c.name).join(' '))}
  local global=${singleQuoted(flags(global))}
  local command="" i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case " $commands " in *" \${COMP_WORDS[i]} "*) command="\${COMP_WORDS[i]}"; break ;; esac
  done
  case "$prev" in
${valueCases.join('\n')}
    ${textOptions.length ? `${textOptions.join('|')}) return ;;` : ''}
  esac
  local words=""
  case "$command" in
${commands.map((c) => `    ${c.name}) words=${singleQuoted([flags(c.options), ...c.argumentChoices].join(' '))} ;;`).join('\n')}
    *) COMPREPLY=($(compgen -W "$commands $global" -- "$cur")); return ;;
  esac
  COMPREPLY=($(compgen -W "$words $global" -- "$cur"))
}
complete -o default -F ${fn} ${name}
`;
}

/** `[`, `]`, `:` and `'` mean something inside a zsh _arguments spec. */
const zshText = (text: string) => text.replace(/[[\]:'\\]/g, ' ').trim();

function zshOption(o: OptionSpec): string {
  const action =
    o.value === 'file' ? ':file:_files' : o.value === 'choice' ? `:value:(${o.choices.join(' ')})` : o.value === 'text' ? ':value: ' : '';
  const names = o.short ? `{${o.short},${o.long}}` : o.long;
  const exclusion = o.short ? `'(${o.short} ${o.long})'` : '';
  return `${exclusion}${names}'[${zshText(o.description)}]${action}'`;
}

function zsh(program: Command, name: string): string {
  const { global, commands } = specOf(program);
  const fn = `_${name.replace(/[^A-Za-z0-9]/g, '_')}`;
  return `#compdef ${name}
# zsh completion for ${name}: ${name} completion zsh > "\${fpath[1]}/_${name}" (or source <(${name} completion zsh))
${fn}() {
  local curcontext="$curcontext" state line
  typeset -A opt_args
  local -a commands
  commands=(
${commands.map((c) => `    '${c.name}:${zshText(c.description)}'`).join('\n')}
  )
  _arguments -C \\
${global.map((o) => `    ${zshOption(o)} \\`).join('\n')}
    '1: :->command' \\
    '*:: :->args'
  case $state in
    command) _describe -t commands '${name} command' commands ;;
    args)
      case $line[1] in
${commands
  .map(
    (c) =>
      `        ${c.name}) _arguments ${[...c.options.map(zshOption), ...global.map(zshOption), ...(c.argumentChoices.length ? [`'1:value:(${c.argumentChoices.join(' ')})'`] : ["'*:argument: '"])].join(' ')} ;;`,
  )
  .join('\n')}
      esac
      ;;
  esac
}
if [ "$funcstack[1]" = "${fn}" ]; then
  ${fn} "$@"
else
  compdef ${fn} ${name}
fi
`;
}

function fishOption(name: string, o: OptionSpec, condition: string): string {
  const parts = [`complete -c ${name}`, condition ? `-n ${singleQuoted(condition)}` : ''];
  if (o.short) parts.push(`-s ${o.short.replace(/^-/, '')}`);
  parts.push(`-l ${o.long.replace(/^--/, '')}`);
  if (o.value === 'file') parts.push('-r -F');
  else if (o.value === 'choice') parts.push(`-x -a ${singleQuoted(o.choices.join(' '))}`);
  else if (o.value === 'text') parts.push('-x');
  parts.push(`-d ${singleQuoted(o.description)}`);
  return parts.filter(Boolean).join(' ');
}

function fish(program: Command, name: string): string {
  const { global, commands } = specOf(program);
  const names = commands.map((c) => c.name).join(' ');
  return [
    `# fish completion for ${name}: ${name} completion fish > ~/.config/fish/completions/${name}.fish`,
    `complete -c ${name} -f`,
    ...global.map((o) => fishOption(name, o, '')),
    ...commands.map(
      (c) =>
        `complete -c ${name} -n ${singleQuoted(`not __fish_seen_subcommand_from ${names}`)} -a ${c.name} -d ${singleQuoted(c.description)}`,
    ),
    ...commands.flatMap((c) => [
      ...c.options.map((o) => fishOption(name, o, `__fish_seen_subcommand_from ${c.name}`)),
      ...(c.argumentChoices.length
        ? [
            `complete -c ${name} -n ${singleQuoted(`__fish_seen_subcommand_from ${c.name}`)} -a ${singleQuoted(c.argumentChoices.join(' '))}`,
          ]
        : []),
    ]),
    '',
  ].join('\n');
}

/** The completion script for `shell`, built from the program's own commands and options. */
export function completionScript(shell: Shell, program: Command): string {
  const name = program.name();
  return shell === 'bash' ? bash(program, name) : shell === 'zsh' ? zsh(program, name) : fish(program, name);
}

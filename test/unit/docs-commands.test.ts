import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

import { Command } from 'commander';
import { describe, expect, it, vi } from 'vitest';

import { run } from '../../src/cli/run.js';
import { VARIABLES } from '../../src/config/env.js';
import { codeBlocks, docPages, readPage, repositoryRoot } from '../helpers/doc-pages.js';

/**
 * The program `run()` builds, as it is about to parse: its commands and options are walked below.
 * Parsing is stopped (nothing runs); the program is the CLI's own, not a copy of its options.
 */
async function cliProgram(): Promise<Command> {
  const parse = vi.spyOn(Command.prototype, 'parseAsync').mockImplementation(async function (this: Command) {
    return this;
  });
  try {
    await run([], { stdout: { write: () => true }, stderr: { write: () => true }, env: {}, cwd: repositoryRoot });
    return parse.mock.contexts[0] as Command;
  } finally {
    parse.mockRestore();
  }
}

interface Invocation {
  where: string;
  words: string[];
}

/** Shell words, quotes kept out: enough for the documented commands (no nested quoting). */
const wordsOf = (text: string): string[] => [...text.matchAll(/"[^"]*"|'[^']*'|\S+/g)].map((m) => m[0].replace(/^(["'])(.*)\1$/, '$2'));

/** Words that start a command line without being the command: `npx`, `sudo`, `VAR=value`, `timeout 20`. */
function withoutPrefixes(words: string[]): string[] {
  const rest = [...words];
  for (;;) {
    const first = rest[0];
    if (first === undefined) return rest;
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(first) || ['npx', 'sudo', 'exec', 'env'].includes(first)) rest.shift();
    else if (first === 'timeout') rest.splice(0, 2);
    else return rest;
  }
}

/** The command lines of a block: a shell block's every line; a session's (text, console) lines after `$ `. */
function commandLines(language: string, text: string): Array<string | undefined> {
  const lines = text.replace(/\\\n/g, ' ').split('\n');
  if (['sh', 'bash', 'shell'].includes(language)) return lines;
  if (['text', 'console'].includes(language)) return lines.map((line) => (line.startsWith('$ ') ? line.slice(2) : undefined));
  return [];
}

/** Every `token-rotator …` invocation in the shell blocks and shown sessions of the docs. */
function invocations(): Invocation[] {
  return docPages().flatMap((page) =>
    codeBlocks(page).flatMap((block) =>
      commandLines(block.language, block.text).flatMap((line, i) =>
        (line ?? '')
          .replace(/(^|\s)#.*$/, '')
          .split(/&&|\|\||[;|`]|\$\(|<\(|\(|\)/)
          .map((part) => withoutPrefixes(wordsOf(part.trim())))
          .filter((words) => /^token-rotator(@\S+)?$/.test(words[0] ?? ''))
          .map((words) => ({ where: `${page}:${block.line + 1 + i}`, words: words.slice(1) })),
      ),
    ),
  );
}

const optionNames = (command: Command): string[] => command.options.flatMap((o) => [o.long, o.short].filter((n): n is string => !!n));

/** What is wrong with one invocation, against the program: an unknown command or option. */
function problemsOf(program: Command, words: string[]): string[] {
  const problems: string[] = [];
  const known = [...optionNames(program), '--help', '-h', '--version', '-V'];
  let command: Command = program;
  for (const word of words) {
    if (word.startsWith('-') && word.length > 1) {
      const name = word.split('=')[0]!;
      if (!known.includes(name)) problems.push(`${command === program ? 'token-rotator' : command.name()}: no option ${name}`);
    } else if (command.commands.length > 0 && !known.includes(words[words.indexOf(word) - 1] ?? '')) {
      const next = command.commands.find((c) => c.name() === word);
      if (!next) {
        problems.push(`no command ${word}${command === program ? '' : ` under ${command.name()}`}`);
        break;
      }
      command = next;
      known.push(...optionNames(next));
    }
  }
  return problems;
}

/** Outside code: the prose of a page, where links live. */
const prose = (text: string) => text.replace(/^```.*?^```$/gms, '').replace(/`[^`\n]*`/g, '');

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens; repeats get -1, -2. */
function anchorsOf(page: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of readPage(page)
    .replace(/^```.*?^```$/gms, '')
    .matchAll(/^#{1,6}\s+(.*)$/gm)) {
    const base = heading!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** What is wrong with a link from a page: its file or its heading missing. */
function brokenLink(page: string, target: string): string[] {
  const [path, anchor] = target.split('#') as [string, string | undefined];
  const file =
    path === ''
      ? page
      : normalize(join(dirname(page), path))
          .split('\\')
          .join('/');
  if (!existsSync(join(repositoryRoot, file))) return [`${page}: ${target} (no file ${file})`];
  if (anchor === undefined || !file.endsWith('.md')) return [];
  return anchorsOf(file).has(anchor) ? [] : [`${page}: ${target} (no heading #${anchor} in ${file})`];
}

/** `ROTATOR_*` names the docs show that are not variables, each with why. */
const NOT_VARIABLES: Record<string, string> = {
  ROTATOR_STATE_BACKED: 'the typo the environment reference shows being warned about',
  ROTATOR_TEST_FAILPOINT: "the tests' crash hook, which the product does not read",
};

describe('the docs', () => {
  it('close every code block they open', () => {
    const unclosed = docPages().filter((page) => (readPage(page).match(/^```/gm) ?? []).length % 2 !== 0);
    expect(unclosed).toEqual([]);
  });

  it('run token-rotator only with commands and options it has', async () => {
    const program = await cliProgram();
    const found = invocations();
    expect(found.length, 'token-rotator invocations in sh blocks').toBeGreaterThan(20);
    const problems = found.flatMap(({ where, words }) => problemsOf(program, words).map((problem) => `${where}: ${problem}`));
    expect(problems).toEqual([]);
  });

  it('catch a command or an option the program does not have', async () => {
    const program = await cliProgram();
    expect(problemsOf(program, ['once', '--json'])).toEqual([]);
    expect(problemsOf(program, ['state', 'forget', 'a', '--yes'])).toEqual([]);
    expect(problemsOf(program, ['rotate', 'a', '--reason', 'leaked', '--revoke-now', '--config', 'r.yaml'])).toEqual([]);
    expect(problemsOf(program, ['once', '--dry-run'])).toEqual(['once: no option --dry-run']);
    expect(problemsOf(program, ['rotat', 'a'])).toEqual(['no command rotat']);
    expect(problemsOf(program, ['state', 'drop', 'a'])).toEqual(['no command drop under state']);
  });

  it('name only ROTATOR_* variables the program reads, and the environment reference lists every one', () => {
    const variables = new Set<string>(VARIABLES);
    const unknown = docPages().flatMap((page) =>
      [...readPage(page).matchAll(/\bROTATOR_[A-Z0-9_]*[A-Z0-9](_\*)?/g)]
        .map((m) => m[0])
        .filter((name) => !variables.has(name) && !variables.has(name.replace(/_FILE$/, '')) && !(name in NOT_VARIABLES))
        // `ROTATOR_OAUTH_*`: a family, named by its prefix.
        .filter((name) => !(name.endsWith('_*') && VARIABLES.some((v) => v.startsWith(name.slice(0, -1)))))
        .map((name) => `${page}: ${name}`),
    );
    expect(unknown).toEqual([]);
    const reference = readPage('docs/reference/environment.md');
    const listed = new Set([...reference.matchAll(/^\| `(ROTATOR_[A-Z0-9_]+?)(?:_FILE)?` \|/gm)].map((m) => m[1]));
    expect(VARIABLES.filter((name) => !listed.has(name))).toEqual([]);
  });

  it('link only to files and headings that exist', () => {
    const links = docPages().flatMap((page) =>
      [...prose(readPage(page)).matchAll(/\]\(([^)\s]+)\)/g)]
        .map((m) => ({ page, target: m[1]! }))
        .filter(({ target }) => !/^[a-z]+:/.test(target)),
    );
    expect(links.length, 'relative links').toBeGreaterThan(50);
    expect(links.flatMap(({ page, target }) => brokenLink(page, target))).toEqual([]);
  });

  it("send readers from the program's messages only to pages that exist, not to the README's reference", () => {
    const sources = readdirSync(join(repositoryRoot, 'src'), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts'))
      .map((file) => ({ file: `src/${file}`, text: readFileSync(join(repositoryRoot, 'src', file), 'utf8') }));
    const named = sources.flatMap(({ file, text }) => [...text.matchAll(/\bdocs\/[\w/.-]+\.md\b/g)].map((m) => ({ file, page: m[0] })));
    expect(named.filter(({ page }) => !existsSync(join(repositoryRoot, page)))).toEqual([]);
    // The README is a front page now: what a message sends a reader to lives under docs/.
    expect(sources.filter(({ text }) => text.includes('README')).map(({ file }) => file)).toEqual([]);
  });

  it('run only npm scripts the package has', () => {
    const scripts = Object.keys((JSON.parse(readFileSync(join(repositoryRoot, 'package.json'), 'utf8')) as { scripts: object }).scripts);
    const unknown = docPages().flatMap((page) =>
      [...readPage(page).matchAll(/\bnpm run ([\w:.-]*\w)/g)]
        .filter((m) => !scripts.includes(m[1]!))
        .map((m) => `${page}: npm run ${m[1]}`),
    );
    expect(unknown).toEqual([]);
  });
});

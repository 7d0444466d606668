import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { runCli } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const exec = promisify(execFile);
const COMMANDS = ['once', 'plan', 'daemon', 'rotate', 'status', 'validate', 'rbac', 'emulator', 'completion'];
let dir: string;

beforeAll(async () => {
  dir = await makeTempDir();
});
afterAll(async () => {
  await exec('rm', ['-rf', dir]);
});

async function script(shell: string): Promise<string> {
  const result = await runCli(['completion', shell], { cwd: dir });
  expect(result.code).toBe(0);
  return result.stdout;
}

const installed = async (program: string) =>
  exec('sh', ['-c', `command -v ${program}`]).then(
    () => true,
    () => false,
  );

describe('shell completion', () => {
  it('bash: sourced, it completes commands, their options and option values', async () => {
    const file = join(dir, 'token-rotator.bash');
    await writeFile(file, await script('bash'));
    const complete = async (...words: string[]) => {
      const { stdout } = await exec('bash', [
        '-c',
        `source "$1"; shift; COMP_WORDS=(token-rotator "$@"); COMP_CWORD=$#; _token_rotator; printf '%s\\n' "\${COMPREPLY[@]}"`,
        'bash',
        file,
        ...words,
      ]);
      return stdout.split('\n').filter(Boolean);
    };
    const { stdout: registered } = await exec('bash', ['-c', 'source "$1"; complete -p token-rotator', 'bash', file]);
    expect(registered).toContain('-F _token_rotator token-rotator');
    expect(await complete('')).toEqual(expect.arrayContaining([...COMMANDS, '--config', '--dotenv']));
    expect(await complete('pl')).toEqual(['plan']);
    expect(await complete('rotate', '--re')).toEqual(['--revoke-now', '--reason']);
    expect(await complete('daemon', '--li')).toEqual(['--listen']);
    expect(await complete('--log-format', '')).toEqual(['auto', 'json', 'pretty']);
    expect(await complete('completion', 'f')).toEqual(['fish']);
  });

  it('zsh: a #compdef function for every command (checked by zsh -n when zsh is installed)', async () => {
    const text = await script('zsh');
    expect(text.split('\n')[0]).toBe('#compdef token-rotator');
    for (const command of COMMANDS) expect(text).toMatch(new RegExp(`^    '${command}:`, 'm'));
    expect(text).toContain('compdef _token_rotator token-rotator');
    if (await installed('zsh')) {
      const file = join(dir, '_token-rotator');
      await writeFile(file, text);
      await exec('zsh', ['-n', file]);
    }
  });

  it('fish: one complete line per command and option (checked by fish -n when fish is installed)', async () => {
    const text = await script('fish');
    const lines = text.split('\n').filter((l) => l && !l.startsWith('#'));
    for (const line of lines) {
      expect(line).toMatch(/^complete -c token-rotator /);
      // every quoted word closed: an odd count of quotes (beyond escaped ones) would swallow the next line
      expect(line.replace(/'\\''/g, '').split("'").length % 2, line).toBe(1);
    }
    for (const command of COMMANDS) expect(text).toMatch(new RegExp(` -a ${command} -d `));
    expect(text).toMatch(/-n '__fish_seen_subcommand_from rotate' -l revoke-now/);
    if (await installed('fish')) {
      const file = join(dir, 'token-rotator.fish');
      await writeFile(file, text);
      await exec('fish', ['-n', file]);
    }
  });

  it('refuses a shell it does not know, with exit 2', async () => {
    const result = await runCli(['completion', 'tcsh'], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/bash, zsh, fish|"bash", "zsh", "fish"/);
  });
});

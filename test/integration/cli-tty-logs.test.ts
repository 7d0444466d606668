import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

import { describe, expect, it } from 'vitest';

import { CLI, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';

/*
 * Logs as a person at a terminal sees them: the CLI runs in a real pseudo-terminal (util-linux
 * `script`), so stderr is a TTY exactly as in an interactive shell.
 */

const run = promisify(execFile);
const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;
const ESC = '\u001b[';

describe('logs on a terminal', () => {
  const fx = useCliFixture();

  async function inTerminal(args: string[], env: Record<string, string> = {}): Promise<string> {
    const command = [process.execPath, CLI, ...args, '--config', 'rotation.yaml', '--dotenv', fx.envFile].map(quote).join(' ');
    const { stdout } = await run('script', ['-qec', command, '/dev/null'], {
      cwd: fx.dir,
      env: { PATH: process.env.PATH ?? '', TERM: 'xterm-256color', ...env },
    }).catch((error: { stdout: string }) => ({ stdout: error.stdout }));
    fx.results.push({ code: 0, stdout, stderr: '' });
    return stdout;
  }

  async function policyWithOneUnknownToken() {
    // A token the service does not know: the check fails and logs an error.
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [{ name: 'ghost', id: 'tok-nowhere', sinks: [{ type: 'file', path: 'ghost.token' }] }],
    });
  }

  it('are human-readable lines in colour, not JSON, with no stack trace for an expected failure', async () => {
    await policyWithOneUnknownToken();
    const screen = await inTerminal(['plan']);
    expect(screen).toMatch(/\[\d\d:\d\d:\d\d\] .*ERROR.*: .*check failed/);
    expect(screen).toContain(ESC);
    expect(screen).not.toMatch(/\{"level":/);
    expect(screen).not.toMatch(/\n\s+at .*\.js:\d+/);
  });

  it('have no colour with NO_COLOR set, and are JSON with --log-format json', async () => {
    await policyWithOneUnknownToken();
    const plain = await inTerminal(['plan'], { NO_COLOR: '1' });
    expect(plain).toMatch(/ERROR: check failed/);
    expect(plain).not.toContain(ESC);
    const json = await inTerminal(['plan', '--log-format', 'json']);
    expect(json).toMatch(/\{"level":"error".*"msg":"check failed"\}/);
  });
});

import { describe, expect, it } from 'vitest';

import { EXIT } from '../../src/cli/io.js';
import { run } from '../../src/cli/run.js';

async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: {},
    cwd: process.cwd(),
  });
  return { code, stdout, stderr };
}

const COMMANDS = ['once', 'plan', 'daemon', 'rotate', 'status', 'validate', 'rbac', 'emulator', 'completion'];
/** `emulator` is listed, to say where the emulator went: its own program, with its own help. */
const HELPED = COMMANDS.filter((command) => command !== 'emulator');

describe('--help', () => {
  it('lists every command, and the exit codes, read from EXIT', async () => {
    const { code, stdout } = await cli(['--help']);
    expect(code).toBe(0);
    for (const command of COMMANDS) expect(stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    for (const exit of Object.values(EXIT)) expect(stdout).toMatch(new RegExp(`^  ${exit}  \\S`, 'm'));
  });

  it.each(HELPED)('of %s shows the global options, examples and exit codes', async (command) => {
    const { code, stdout } = await cli([command, '--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('Global Options:');
    expect(stdout).toMatch(/--config <path>/);
    expect(stdout).toMatch(/--log-format <format>/);
    expect(stdout).toMatch(/\nExamples:\n {2}\S/);
    expect(stdout).toMatch(/\nExit codes:\n {2}0 {2}\S/);
    expect(stdout).toMatch(/^ {2}2 {2}/m);
  });

  it('of emulator says that the emulator is its own program, and how to run it (exit 2)', async () => {
    const { code, stdout, stderr } = await cli(['emulator', '--help']);
    expect({ code, stdout }).toEqual({ code: EXIT.usage, stdout: '' });
    expect(stderr).toBe(
      'token-rotator: 1 configuration problem:\n  emulator: is its own program: npx token-rotator-emulator (npm package token-rotator-emulator)\n',
    );
  });

  it.each(['once', 'plan', 'rotate', 'validate', 'daemon'])('of %s names the service settings it needs', async (command) => {
    const { stdout } = await cli([command, '--help']);
    for (const variable of ['ROTATOR_API_URL', 'ROTATOR_OAUTH_CLIENT_ID', 'ROTATOR_STATE_DIR', 'ROTATOR_LOG_LEVEL']) {
      expect(stdout).toContain(`  ${variable} `);
    }
    expect(stdout).toContain('NAME_FILE');
    for (const exit of Object.values(EXIT)) expect(stdout).toMatch(new RegExp(`^  ${exit}  \\S`, 'm'));
  });

  it('of status names the state settings, not the service ones it does not read', async () => {
    const { stdout } = await cli(['status', '--help']);
    expect(stdout).toContain('  ROTATOR_STATE_DIR ');
    expect(stdout).not.toContain('ROTATOR_API_URL');
    expect(stdout).not.toContain('ROTATOR_OAUTH');
  });

  it.each([
    ['once', 'RunResult'],
    ['plan', 'PlanResult'],
    ['rotate', 'RotateResult'],
    ['status', 'Status'],
    ['validate', 'Validation'],
    ['rbac', 'Rbac'],
  ])('of %s says --json prints the envelope of kind %s, as it does', async (command, kind) => {
    const { stdout } = await cli([command, '--help']);
    const option = /^ {2}--json\s+(.*?)(?=^ {2}-|^\S)/ms.exec(stdout)![1]!.replace(/\s+/g, ' ');
    expect(option).toContain(`JSON envelope {apiVersion, kind: ${kind}, summary, problems, items}`);
    expect(option).not.toMatch(/array/);
  });

  it('of daemon names its listener, in every form it takes', async () => {
    const { stdout } = await cli(['daemon', '--help']);
    expect(stdout).toMatch(/ROTATOR_LISTEN +the daemon listener, HOST:PORT, :PORT or PORT/);
    expect(stdout).toContain('--listen :9464');
  });
});

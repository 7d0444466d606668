import { rm } from 'node:fs/promises';

import { type Emulator, type EmulatorOptions, startEmulator } from 'token-rotator-emulator';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';

import { type CliResult, emulatorSecrets, leakCheckedOutputs, runCli, writeEmulatorEnv } from './cli.js';
import { expectNoLeak } from './leaks.js';
import { makeTempDir } from './temp-dir.js';

export interface CliFixture {
  emulator: Emulator;
  /** A fresh folder per test, holding the policy, the env file, the state and the sinks. */
  dir: string;
  envFile: string;
  /** Every CLI run of the test: after it, all their output and the state files are checked for leaks. */
  results: CliResult[];
  /** The CLI with `args` on the folder's `rotation.yaml` and env file, its result kept for the leak sweep. */
  cli(...args: string[]): Promise<CliResult>;
}

/**
 * One emulator per file; per test a fresh folder with an env file for it, no faults, no recorded
 * requests, and afterwards the leak sweep over every run's output and every state file.
 */
export function useCliFixture(
  options: {
    emulator?: EmulatorOptions;
    env?: Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>);
  } = {},
): CliFixture {
  const fixture = { results: [] as CliResult[] } as CliFixture;
  fixture.cli = async (...args) => {
    const result = await runCli([...args, '--config', 'rotation.yaml', '--dotenv', fixture.envFile], { cwd: fixture.dir });
    fixture.results.push(result);
    return result;
  };
  beforeAll(async () => {
    fixture.emulator = await startEmulator(options.emulator);
  });
  afterAll(async () => {
    await fixture.emulator.close();
  });
  beforeEach(async () => {
    fixture.dir = await makeTempDir();
    const env = typeof options.env === 'function' ? await options.env() : options.env;
    fixture.envFile = await writeEmulatorEnv(fixture.emulator, fixture.dir, env);
    fixture.emulator.faults.clear();
    fixture.emulator.requests.length = 0;
    fixture.results.length = 0;
  });
  afterEach(async () => {
    expectNoLeak(await leakCheckedOutputs(fixture.dir, fixture.results), emulatorSecrets(fixture.emulator));
    await rm(fixture.dir, { recursive: true, force: true });
  });
  return fixture;
}

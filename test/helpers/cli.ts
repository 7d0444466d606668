import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

import { type Emulator, envFileText } from 'token-rotator-emulator';
import { expect } from 'vitest';
import { stringify } from 'yaml';

export const CLI = resolve(import.meta.dirname, '../../dist/cli/main.js');
/** The emulator's own program, as its package builds it (`npm run build:all`). */
export const EMULATOR_CLI = resolve(import.meta.dirname, '../../packages/emulator/dist/main.js');
/** The preload that gives a child the crash hook ROTATOR_TEST_FAILPOINT asks for; no build has it. */
export const FAILPOINT_PRELOAD = resolve(import.meta.dirname, '../hooks/failpoint.mjs');

/** Node's arguments for a child running `program`: the failpoint preload when its env asks for one. */
function nodeArgs(program: string, args: string[], env: Record<string, string> | undefined): string[] {
  return [...(env?.ROTATOR_TEST_FAILPOINT ? ['--import', FAILPOINT_PRELOAD] : []), program, ...args];
}

export interface CliResult {
  code: number;
  /** Set when the process was killed. */
  signal?: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Starts the built CLI and hands back the process, for tests that kill it. */
export function startCli(
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
  program = CLI,
): { child: ChildProcess; done: Promise<CliResult> } {
  const child = spawn(process.execPath, nodeArgs(program, args, options.env), {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += String(chunk)));
  child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
  const done = new Promise<CliResult>((resolve) => {
    child.on('close', (code, signal) => resolve({ code: code ?? 1, signal, stdout, stderr }));
  });
  return { child, done };
}

/** Runs the built CLI as a user would; asynchronous, so an in-process emulator keeps serving. */
export function runCli(args: string[], options: { cwd: string; env?: Record<string, string> }, program = CLI): Promise<CliResult> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      nodeArgs(program, args, options.env),
      // Only what the test gives: a developer's own ROTATOR_* variables must not leak in.
      { cwd: options.cwd, env: { PATH: process.env.PATH ?? '', ...options.env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        done({ code, signal: error?.signal ?? null, stdout, stderr });
      },
    );
  });
}

/** Runs the emulator's own program (`token-rotator-emulator`), as runCli runs the product's. */
export function runEmulator(args: string[], options: { cwd: string; env?: Record<string, string> }): Promise<CliResult> {
  return runCli(args, options, EMULATOR_CLI);
}

/** Starts the emulator's own program and hands back the process, for tests that stop it. */
export function startEmulatorCli(
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
): { child: ChildProcess; done: Promise<CliResult> } {
  return startCli(args, options, EMULATOR_CLI);
}

/**
 * Writes an env file for the emulator's default client (0600, as a user would keep it), with a state
 * key so that staged secrets are sealed in the journal.
 */
export async function writeEmulatorEnv(emulator: Emulator, dir: string, extra: Record<string, string> = {}): Promise<string> {
  const file = join(dir, 'rotator.env');
  const env = {
    ...emulator.rotatorEnv(),
    ROTATOR_STATE_DIR: join(dir, 'state'),
    ROTATOR_STATE_KEY: randomBytes(32).toString('base64'),
    ...extra,
  };
  await writeFile(file, envFileText(env), { mode: 0o600 });
  return file;
}

/**
 * Puts a token's current secret where a file sink expects it, as an app that already has its token
 * would: the first run adopts it instead of finding an empty sink (which is drift, repaired by
 * rotating).
 */
export async function seedSink(dir: string, path: string, secret: string): Promise<void> {
  const file = join(dir, path);
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, secret, { mode: 0o600 });
}

export async function writePolicy(dir: string, policy: unknown): Promise<string> {
  const file = join(dir, 'rotation.yaml');
  await writeFile(file, stringify(policy));
  return file;
}

/** A policy of one token: `rotation.yaml` in `dir`. */
export function writeTokenPolicy(dir: string, name: string, id: string, sinks: readonly object[]): Promise<string> {
  return writePolicy(dir, { version: 1, tokens: [{ name, id, sinks }] });
}

/**
 * Everything a run left on disk under `dir`, except the sinks' own files, for leak checks. The one
 * place a secret may sit plain is the current secret a record holds when no state key is set (as
 * the README says, in a 0600 file): it is left out here, once that file is proven 0600.
 */
export async function readStateFiles(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const files = await readdir(join(dir, 'state'), { recursive: true }).catch(() => [] as string[]);
  for (const f of files) {
    const path = join(dir, 'state', f);
    const text = await readFile(path, 'utf8').catch(() => undefined);
    if (text !== undefined) out[`state/${f}`] = f.startsWith('tokens/') ? await withoutHeldPlainSecret(path, text) : text;
  }
  return out;
}

async function withoutHeldPlainSecret(path: string, text: string): Promise<string> {
  let record: { secret?: { value?: { plain?: string } } };
  try {
    record = JSON.parse(text) as typeof record;
  } catch {
    return text;
  }
  if (record.secret?.value?.plain === undefined) return text;
  expect((await stat(path)).mode & 0o777, `${path} holds a plain secret: 0600 only`).toBe(0o600);
  return JSON.stringify({ ...record, secret: { ...record.secret, value: { plain: '[held plain: no state key set]' } } });
}

/** Every secret the emulator ever issued, plus its client secret. */
export function emulatorSecrets(emulator: Emulator): string[] {
  return [...emulator.store.all().map((t) => t.secret), ...(emulator.client.clientSecret ? [emulator.client.clientSecret] : [])];
}

/** The leak sweep after CLI runs: every stdout, stderr and state file, against every secret the emulator issued. */
export async function leakCheckedOutputs(dir: string, results: readonly CliResult[]): Promise<Record<string, string>> {
  const outputs: Record<string, string> = { ...(await readStateFiles(dir)) };
  results.forEach((r, i) => {
    outputs[`run ${i} stdout`] = r.stdout;
    outputs[`run ${i} stderr`] = r.stderr;
  });
  return outputs;
}

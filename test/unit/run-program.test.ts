import { rm } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { type LeftBehind, type ProgramResult, runProgram } from '../../src/sinks/exec/run-program.js';
import {
  ended,
  endHelper,
  helperPid,
  type HelperStart,
  isHanging,
  writeHelperLeavingProgram,
} from '../doubles/exec/helper-leaving-program.js';
import { makeTempDir } from '../helpers/temp-dir.js';

// Without the bounds, each of these waits for the helper's `sleep 300`: the test's timeout fails it.
const HANG_BOUND_MS = 60_000;

let dir: string;
let count = 0;
const started: string[] = [];

beforeAll(async () => {
  dir = await makeTempDir();
});
// Whatever a test's outcome, no sleep it started outlives it.
afterEach(async () => {
  await Promise.all(started.splice(0).map(endHelper));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

function destination(): string {
  const dest = join(dir, `dest-${++count}`);
  started.push(dest);
  return dest;
}

/** What the run left behind, as the program's runner reports it: also when it was stopped. */
let left: LeftBehind[] = [];

async function run(
  program: string,
  args: string[],
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<ProgramResult & { leftBehind: LeftBehind }> {
  left = [];
  const result = await runProgram(program, args, {
    input: 'the-input',
    env: { PATH: process.env.PATH ?? '' },
    cwd: dir,
    timeoutMs: 30_000,
    onLeftBehind: (what) => left.push(what),
    ...options,
  });
  expect(left).toHaveLength(1);
  return { ...result, leftBehind: left[0]! };
}

async function helperOf(dest: string): Promise<number> {
  const pid = await helperPid(dest);
  if (pid === undefined) throw new Error('the helper never started');
  return pid;
}

/** The careless program run to its end, and its helper's pid. */
async function runLeaving(start: HelperStart, args: string[], options: { timeoutMs?: number } = {}) {
  const program = await writeHelperLeavingProgram(dir, start);
  const dest = destination();
  const result = await run(program, [dest, ...args], options);
  return { result, helper: await helperOf(dest) };
}

describe('a program that leaves a helper holding its output', () => {
  for (const start of ['setsid', 'escaped', 'nohup', 'background'] as HelperStart[]) {
    it(
      `(${start}) ends with the program: its exit counts, the helper is killed and reported`,
      async () => {
        const { result, helper } = await runLeaving(start, []);
        expect(result).toMatchObject({ code: 0, timedOut: false, stdout: 'created\n' });
        expect(result.leftBehind).toEqual({ killed: [helper], outputHeld: true, searched: 'every-process' });
        await ended(helper);
      },
      HANG_BOUND_MS,
    );
  }

  it(
    'fails by its exit code as any program does',
    async () => {
      const { result, helper } = await runLeaving('setsid', ['3']);
      expect(result).toMatchObject({ code: 3, timedOut: false });
      expect(result.leftBehind.killed).toEqual([helper]);
    },
    HANG_BOUND_MS,
  );

  it(
    'at its timeout, ends the program and the helper that left its session',
    async () => {
      // Long enough for the helper to start on a loaded machine: the program hangs, so the timeout ends it.
      const { result, helper } = await runLeaving('setsid', ['--hang'], { timeoutMs: 10_000 });
      expect(result).toMatchObject({ timedOut: true, signal: 'SIGTERM' });
      expect(result.leftBehind.killed).toEqual([helper]);
      await ended(helper);
    },
    HANG_BOUND_MS,
  );

  it(
    'at a stop, ends the program and the helper, and rejects with the stop',
    async () => {
      const program = await writeHelperLeavingProgram(dir, 'setsid');
      const dest = destination();
      const stop = new AbortController();
      const running = run(program, [dest, '--hang'], { signal: stop.signal });
      // Stopped once it hangs: earlier, its wait loop's `sleep 0.05` may still be running, and is killed too.
      while (!(await isHanging(dest))) await new Promise((r) => setTimeout(r, 50));
      stop.abort();
      await expect(running).rejects.toMatchObject({ name: 'AbortError' });
      expect(left).toEqual([{ killed: [await helperOf(dest)], outputHeld: false, searched: 'every-process' }]);
      await ended(await helperOf(dest));
    },
    HANG_BOUND_MS,
  );
});

describe('a program that leaves a helper running with its output closed', () => {
  it(
    'ends at once, and the helper, which left its session and group, is killed and reported',
    async () => {
      const { result, helper } = await runLeaving('daemon', []);
      expect(result).toMatchObject({ code: 0, leftBehind: { killed: [helper], outputHeld: false, searched: 'every-process' } });
      await ended(helper);
    },
    HANG_BOUND_MS,
  );
});

describe('a program that leaves nothing behind', () => {
  it('reports nothing left behind', async () => {
    const result = await run('/bin/sh', ['-c', 'cat; echo done']);
    expect(result).toMatchObject({ code: 0, stdout: 'the-inputdone\n', leftBehind: { killed: [], outputHeld: false } });
  });

  it('gets its run marker and nothing else of the environment but what it is given', async () => {
    const result = await run('/bin/sh', ['-c', 'env']);
    const names = result.stdout
      .trim()
      .split('\n')
      .map((line) => line.split('=')[0]);
    expect(names.filter((n) => !['PWD', 'SHLVL', '_'].includes(n!)).sort()).toEqual(['PATH', 'TOKEN_ROTATOR_RUN_ID']);
  });
});

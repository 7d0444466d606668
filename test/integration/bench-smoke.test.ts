import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';

import { expect, it } from 'vitest';

import { makeTempDir } from '../helpers/temp-dir.js';

const ROOT = resolve(import.meta.dirname, '../..');
/** Every goal of issue 12 the benchmark reports, and the sidecar budget beside them. */
const GOALS = ['1a', '1b', '2a', '2b', '2c', '3a', '3b', '4a', '4b', '4c', '4d', '5a', '5b', '5c', '5d', '6a', '6b', '6c', 'x1'];

interface GoalRow {
  id: string;
  goal: string;
  target: string;
  measured: string;
  baseline: string;
  result: string;
  value: number | null;
}

/**
 * Not a timed test: the goals need not pass, only every measurement must run and give a figure. The
 * quick run takes about 25 s on an idle 2-core machine and several times that with both cores busy;
 * the bounds only stop a run that hangs.
 */
const BENCH_BOUND_MS = 300_000;

it(
  'npm run bench (quick) prints every goal with a measured figure, a baseline and a verdict',
  { timeout: BENCH_BOUND_MS + 20_000 },
  async () => {
    const dir = await makeTempDir('token-rotator-bench-smoke-');
    try {
      const out = join(dir, 'bench.json');
      const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
        execFile(
          process.execPath,
          [join(ROOT, 'bench/run.mjs')],
          { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: dir, BENCH_QUICK: '1', BENCH_OUT: out }, timeout: BENCH_BOUND_MS },
          (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
        );
      });
      expect(code, stderr).toBe(0);

      const header = stdout.split('\n').find((line) => line.startsWith('GOAL '));
      expect(header?.split('|').map((c) => c.trim())).toEqual(['GOAL', 'TARGET', 'MEASURED', 'BASELINE', 'RESULT']);
      expect(stdout).toMatch(/^machine: .+, \d+ cores, .*node v\d+/m);
      for (const id of GOALS) {
        const line = stdout.split('\n').find((l) => l.startsWith(`${id} `));
        expect(line, `row ${id} in\n${stdout}`).toBeDefined();
        const [, , measured, , result] = line!.split('|').map((c) => c.trim());
        expect(measured, `${id}: ${line}`).toMatch(/\d/);
        expect(['pass', 'short', 'stated', 'n/a'], `${id}: ${line}\n${stderr}`).toContain(result);
      }

      const json = JSON.parse(await readFile(out, 'utf8')) as { quick: boolean; machine: { node: string }; goals: GoalRow[] };
      expect(json.quick).toBe(true);
      expect(json.machine.node).toBe(process.version);
      expect(json.goals.map((g) => g.id).sort()).toEqual([...GOALS].sort());
      for (const goal of json.goals) {
        if (goal.result !== 'n/a') expect(Number.isFinite(goal.value), `${goal.id}: ${JSON.stringify(goal)}`).toBe(true);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
);

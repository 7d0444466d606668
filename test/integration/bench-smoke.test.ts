import { execFile } from 'node:child_process';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';

import { expect, it } from 'vitest';

import { floorClientRun } from '../../bench/floor-client.mjs';
import { makeTempDir } from '../helpers/temp-dir.js';

const ROOT = resolve(import.meta.dirname, '../..');
/** Every row of issue 25's benchmark: its goals, the figures it states, and the syscall counts. */
const GOALS = [
  '1a',
  '1b',
  '2a',
  '2b',
  '2c',
  '3a',
  '3b',
  '4a',
  '4b',
  '4c',
  '4d',
  '5a',
  '5b',
  '5c',
  '5d',
  '5e',
  '6a',
  '6b',
  '6c',
  'x1',
  'x2',
];

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

/** The journal lines of the floor client: the secret before the delivery, the commit after it. */
type JournalLine = { name: string; newId: string; secret: string } | { name: string; commit: string };

it('the floor client of goal 1 does a durable rotation of every due token at the request floor, at most `concurrency` at once', async () => {
  const concurrency = 4;
  let inspected = false;
  const run = await floorClientRun({
    count: 12,
    latencyMs: 5,
    concurrency,
    inspect: async (out, emulator) => {
      const lines = (await readFile(join(out, 'journal.log'), 'utf8'))
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as JournalLine);
      expect(lines).toHaveLength(24);
      const files = await readdir(join(out, 'secrets'));
      expect(files.sort()).toEqual(Array.from({ length: 12 }, (_, i) => `tok-${i}.token`).sort());
      for (const file of files) {
        const name = file.replace(/\.token$/, '');
        const mine = lines.filter((l) => l.name === name);
        // Journalled before it is delivered, committed after, to the id the service minted.
        expect(mine).toHaveLength(2);
        const [secret, commit] = mine as [JournalLine, JournalLine];
        expect('secret' in secret && 'commit' in commit && commit.commit === secret.newId).toBe(true);
        const minted = emulator.store.get('newId' in secret ? secret.newId : '');
        expect(minted?.name).toBe(name);
        expect(await readFile(join(out, 'secrets', file), 'utf8')).toBe(minted?.secret);
        expect((await stat(join(out, 'secrets', file))).mode & 0o777).toBe(0o600);
      }
      inspected = true;
    },
  });
  expect(run.stderrTail).toBeUndefined();
  expect(run.ok).toBe(true);
  expect(inspected).toBe(true);
  expect({ rotated: run.rotated, delivered: run.delivered }).toEqual({ rotated: 12, delivered: 12 });
  const { checkGet, verifyGet, post, oauthToken, discovery, other, status429 } = run.kinds;
  expect({ checkGet, verifyGet, post, oauthToken, discovery, other, status429 }).toEqual({
    checkGet: 12,
    verifyGet: 12,
    post: 12,
    oauthToken: 1,
    discovery: 1,
    other: 0,
    status429: 0,
  });
  expect(run.peakInflight).toBeLessThanOrEqual(concurrency);
  // Group commit: never more syncs than appends (two per token).
  expect(run.syncs!.journal).toBeLessThanOrEqual(24);
});

import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';

import { type Emulator, startEmulator } from 'token-rotator-emulator';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { type CliResult, emulatorSecrets, leakCheckedOutputs, runCli, startCli, writeEmulatorEnv, writePolicy } from '../helpers/cli.js';
import { expectNoLeak } from '../helpers/leaks.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const SEED = Number(process.env.KILL_SEED ?? 20261122);
const KILLS = 50;
const NAMES = ['alpha', 'bravo', 'charlie', 'delta'];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let emulator: Emulator;
let dir: string;

beforeAll(async () => {
  // A little latency spreads each run's steps over time, so kills land between all of them.
  emulator = await startEmulator({ rateLimitPerMinute: 1_000_000, latencyMs: 15 });
  dir = await makeTempDir();
});
afterAll(async () => {
  await emulator.close();
  await rm(dir, { recursive: true, force: true });
});

it(`survives ${KILLS} kill -9 at random moments (seed ${SEED}) while ${NAMES.length} tokens rotate`, { timeout: 240_000 }, async () => {
  const random = seededRandom(SEED);
  const envFile = await writeEmulatorEnv(emulator, dir, { ROTATOR_HTTP_TIMEOUT: '5s' });
  const tokens = NAMES.map((name) => emulator.store.add({ name, expiresAt: new Date(Date.now() + 60 * 86400_000) }));
  // maxAge 1s: every token is due again on almost every run, so every run has rotations to interrupt.
  await writePolicy(dir, {
    version: 1,
    defaults: { maxAge: '1s' },
    tokens: tokens.map((t) => ({
      name: t.name,
      id: t.id,
      sinks: [0, 1].map((n) => ({ type: 'file', path: `secrets/${t.name}-${n}.token` })),
    })),
  });
  const args = ['once', '--config', 'rotation.yaml', '--dotenv', envFile];
  const runs: CliResult[] = [];

  // Each kill lands at a random moment of a run's work: after its first check, at a random fraction
  // of how long a whole run's work took last time. Not a fixed delay from spawn: on a loaded machine
  // start-up alone can take longer than any fixed delay, and kills would only ever hit start-up; on
  // an idle one every run would finish first.
  let kills = 0;
  let workMs = 300;
  for (let attempt = 0; kills < KILLS && attempt < KILLS * 3; attempt++) {
    const { child, done } = startCli(args, { cwd: dir });
    const working = new Promise<number>((resolve) => {
      let seen = '';
      child.stderr!.on('data', (chunk) => {
        seen += String(chunk);
        if (seen.includes('"step":"check"')) resolve(Date.now());
      });
      child.on('close', () => resolve(Date.now()));
    });
    const started = await working;
    await sleep(random() * workMs);
    if (child.exitCode === null) child.kill('SIGKILL');
    const result = await done;
    runs.push(result);
    if (result.signal === 'SIGKILL') kills += 1;
    else workMs = Math.max(50, Date.now() - started);
  }
  expect(kills).toBe(KILLS);

  // Then runs left alone finish whatever was interrupted; orphans found on the way make one exit 1.
  let clean: CliResult | undefined;
  for (let i = 0; i < 3 && clean?.code !== 0; i++) {
    clean = await runCli(args, { cwd: dir });
    runs.push(clean);
  }
  expect(clean!.code, clean!.stderr).toBe(0);

  // Every sink holds a working secret of its name's current token, and no rotation is left open.
  expect(await readdir(join(dir, 'state/journal')).catch(() => [])).toEqual([]);
  for (const name of NAMES) {
    const record = JSON.parse(await readFile(join(dir, `state/tokens/${name}.json`), 'utf8')) as { currentId: string };
    for (const n of [0, 1]) {
      const secret = await readFile(join(dir, `secrets/${name}-${n}.token`), 'utf8');
      const response = await fetch(`${emulator.apiUrl}/_emulator/whoami`, { headers: { authorization: `Bearer ${secret}` } });
      expect(response.ok, `${name} sink ${n} works`).toBe(true);
      expect(((await response.json()) as { id: string }).id).toBe(record.currentId);
    }
  }

  // Long-lived tokens nobody holds the secret of are orphans, and each was reported.
  const delivered = new Set(await Promise.all((await readdir(join(dir, 'secrets'))).map((f) => readFile(join(dir, 'secrets', f), 'utf8'))));
  const horizon = Date.now() + 2 * 3600_000;
  const unusable = emulator.store
    .all()
    .filter((t) => NAMES.includes(t.name) && t.expiresAt && t.expiresAt.getTime() > horizon && !delivered.has(t.secret));
  const reported = runs.reduce((n, r) => n + (r.stderr.match(/ORPHANED TOKEN/g)?.length ?? 0), 0);
  expect(unusable.length).toBeLessThanOrEqual(reported);

  const regenerates = emulator.requests.filter((r) => r.op === 'regenerate' && r.committed).length;
  console.info(
    `seed ${SEED}: ${kills} kills in ${runs.length} runs, ${regenerates} regenerates applied, ${reported} orphan reports, ${unusable.length} unusable tokens`,
  );

  expectNoLeak(await leakCheckedOutputs(dir, runs), emulatorSecrets(emulator));
});

import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { ended, endHelper, helperPid, type HelperStart, writeHelperLeavingProgram } from '../doubles/exec/helper-leaving-program.js';
import { type CliResult, startCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { itemsOf } from '../helpers/output-items.js';

// Before the bounds, each of these runs waited for the helper's `sleep 300`: the test's timeout fails it.
const HANG_BOUND_MS = 90_000;

/**
 * The red team's program: it stores the secret, leaves a helper holding its stdout, and exits 0 (or
 * hangs until stopped). The run must end anyway, the helper with it, and say so.
 */
describe('an exec program that leaves a helper holding its output', () => {
  const fx = useCliFixture();
  let running: ChildProcess | undefined;

  // Whatever the outcome, neither the CLI nor the helper outlives the test.
  afterEach(async () => {
    if (running && running.exitCode === null && running.signalCode === null) running.kill('SIGKILL');
    running = undefined;
    await endHelper(join(fx.dir, 'pushed.token'));
  });

  async function policyWith(start: HelperStart, args: string[], timeout: string): Promise<string> {
    const program = await writeHelperLeavingProgram(fx.dir, start);
    const token = fx.emulator.store.add({ name: 'pushed', expiresAt: new Date(Date.now() + 60 * 86400_000) });
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [{ name: 'pushed', id: token.id, sinks: [{ type: 'exec', command: [program, 'pushed.token', ...args], timeout }] }],
    });
    return token.id;
  }

  function once(): Promise<CliResult> {
    const started = startCli(['once', '--json', '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir });
    running = started.child;
    return started.done.then((result) => {
      fx.results.push(result);
      return result;
    });
  }

  for (const start of ['setsid', 'escaped', 'nohup'] as HelperStart[]) {
    it(
      `(${start}, timeout 20s) the run ends, the write counts by the exit code, and the helper is killed and said`,
      async () => {
        await policyWith(start, [], '20s');
        const result = await once();
        expect(result.code, result.stderr).toBe(0);
        const [outcome] = itemsOf(result.stdout) as Array<{ newId: string }>;
        const delivered = fx.emulator.store.all().find((t) => t.id === outcome!.newId);
        expect(await readFile(join(fx.dir, 'pushed.token'), 'utf8')).toBe(delivered!.secret);
        const helper = (await helperPid(join(fx.dir, 'pushed.token')))!;
        await ended(helper);
        const warning = result.stderr.split('\n').find((line) => line.includes('left 1 process(es) running'));
        expect(JSON.parse(warning!)).toMatchObject({ level: 'warn', operation: 'write', outputHeld: true, killed: [helper] });
      },
      HANG_BOUND_MS,
    );
  }

  it(
    'SIGTERM ends a run whose program hangs with such a helper: the program and the helper are killed at the deadline',
    async () => {
      await policyWith('setsid', ['--hang'], '10m');
      const result = once();
      const dest = join(fx.dir, 'pushed.token');
      while ((await helperPid(dest)) === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
      running!.kill('SIGTERM');
      const stopped = await result;
      expect(stopped.code, stopped.stderr).toBe(143);
      await ended((await helperPid(dest))!);
    },
    HANG_BOUND_MS,
  );
});

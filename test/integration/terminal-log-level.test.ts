import { appendFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { runCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';

const DAY = 24 * 3600_000;

/**
 * A one-shot command at a terminal: its table on stdout is what a person reads, and the steps it
 * logs on stderr must not bury it. The CLI decides by `process.stderr.isTTY`; a preloaded module
 * makes stderr say it is a terminal while the test still reads it through a pipe.
 */
describe('the log level of once, plan and rotate at a terminal', () => {
  const fx = useCliFixture();

  /** The CLI with stderr a terminal (and no colours, to read it). */
  async function atTerminal(args: string[], env: Record<string, string> = {}) {
    const preload = join(fx.dir, 'stderr-is-a-terminal.mjs');
    await writeFile(preload, "Object.defineProperty(process.stderr, 'isTTY', { value: true });\n");
    const result = await runCli([...args, '--config', 'rotation.yaml', '--dotenv', fx.envFile], {
      cwd: fx.dir,
      env: { NODE_OPTIONS: `--import=${preload}`, NO_COLOR: '1', ...env },
    });
    fx.results.push(result);
    return result;
  }

  it('logs warnings only unless -v or ROTATOR_LOG_LEVEL asks for more; elsewhere every step, as before', async () => {
    const token = fx.emulator.store.add({ name: 'ingest', expiresAt: new Date(Date.now() + 2 * DAY) });
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [{ name: 'ingest', id: token.id, sinks: [{ type: 'file', path: 'secrets/ingest.token' }] }],
    });
    const plan = await atTerminal(['plan']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(/^ingest\s+rotate\s/m);
    expect(plan.stderr).not.toMatch(/INFO/);

    const once = await atTerminal(['once']);
    expect(once.code, once.stderr).toBe(0);
    expect(once.stdout).toMatch(/^ingest\s+rotate\s/m);
    // Pretty lines (a terminal), but not one per step.
    expect(once.stderr).not.toMatch(/INFO/);

    const verbose = await atTerminal(['rotate', 'ingest', '--yes', '-v']);
    expect(verbose.code, verbose.stderr).toBe(0);
    expect(verbose.stderr).toMatch(/INFO: committed/);

    // The variable, from the environment or the dotenv file, sets the level whatever the terminal.
    const set = await atTerminal(['rotate', 'ingest', '--yes'], { ROTATOR_LOG_LEVEL: 'info' });
    expect(set.stderr).toMatch(/INFO: committed/);
    const quiet = await atTerminal(['rotate', 'ingest', '--yes', '-v'], { ROTATOR_LOG_LEVEL: 'error' });
    expect(quiet.stderr).not.toMatch(/INFO|WARN/);
    await appendFile(fx.envFile, 'ROTATOR_LOG_LEVEL=info\n');
    expect((await atTerminal(['rotate', 'ingest', '--yes'])).stderr).toMatch(/INFO: committed/);

    // Not at a terminal (CI, a CronJob): every step, in JSON lines, as before.
    const piped = await fx.cli('rotate', 'ingest', '--yes');
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stderr).toMatch(/"level":"info".*"msg":"committed"/);
  });
});

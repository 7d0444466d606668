import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { CLI, type CliResult, seedSink, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { freePort } from '../helpers/free-port.js';

const DAY = 24 * 3600_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Preloaded into the daemon: as it exits, what V8 says of its optimizing compilers, through V8's own
 * test functions (hence --allow-natives-syntax, given to this daemon only).
 */
const PROBE = `
import { writeFileSync } from 'node:fs';
process.on('exit', () => {
  const ask = (name) => new Function('return %' + name + '()')();
  writeFileSync(process.env.COMPILERS_OUT, JSON.stringify({ turbofan: ask('IsTurbofanEnabled'), maglev: ask('IsMaglevEnabled'), sparkplug: ask('IsSparkplugEnabled') }));
});
`;

describe('the daemon runs in the interpreter alone (resident memory while idle)', () => {
  let port = 0;
  const fx = useCliFixture({
    env: async () => {
      port = await freePort();
      return { ROTATOR_LISTEN: `127.0.0.1:${port}` };
    },
  });

  /** V8's compilers as it has them once the daemon has checked its token and is stopped. */
  async function daemonCompilers(nodeArgs: string[] = []): Promise<{ turbofan: boolean; maglev: boolean; sparkplug: boolean }> {
    const token = fx.emulator.store.add({ name: 't0', expiresAt: new Date(Date.now() + 60 * DAY) });
    await seedSink(fx.dir, 'secrets/t0.token', token.secret);
    await writePolicy(fx.dir, {
      version: 1,
      defaults: { schedule: '0 * * * *' },
      tokens: [{ name: 't0', id: token.id, sinks: [{ type: 'file', path: 'secrets/t0.token' }] }],
    });
    const probe = join(fx.dir, 'probe.mjs');
    const out = join(fx.dir, 'compilers.json');
    await writeFile(probe, PROBE);
    const child = spawn(
      process.execPath,
      ['--allow-natives-syntax', '--import', probe, ...nodeArgs, CLI, 'daemon', '--config', 'rotation.yaml', '--dotenv', fx.envFile],
      { cwd: fx.dir, env: { PATH: process.env.PATH ?? '', COMPILERS_OUT: out }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const result: CliResult = { code: 1, stdout: '', stderr: '' };
    child.stdout.on('data', (chunk) => (result.stdout += String(chunk)));
    child.stderr.on('data', (chunk) => (result.stderr += String(chunk)));
    const done = new Promise<void>((resolve) => child.on('close', (code) => resolve(void (result.code = code ?? 1))));
    const deadline = Date.now() + 25_000;
    while (!/^token_rotator_token_expiry_timestamp_seconds\{token="t0"\} /m.test(await metrics())) {
      if (Date.now() > deadline) throw new Error(`the daemon did not report its first check in time\n${result.stderr}`);
      await sleep(100);
    }
    child.kill('SIGTERM');
    await done;
    fx.results.push(result);
    expect(result.code).toBe(0);
    return JSON.parse(await readFile(out, 'utf8')) as { turbofan: boolean; maglev: boolean; sparkplug: boolean };
  }

  const metrics = () =>
    fetch(`http://127.0.0.1:${port}/metrics`)
      .then((r) => r.text())
      .catch(() => '');

  it('without any flag: neither Turbofan, Maglev nor Sparkplug', async () => {
    expect(await daemonCompilers()).toEqual({ turbofan: false, maglev: false, sparkplug: false });
  });

  it("a compiler flag of the user's wins", async () => {
    expect(await daemonCompilers(['--turbofan'])).toEqual({ turbofan: true, maglev: false, sparkplug: false });
  });
});

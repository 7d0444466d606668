import { mkdir, symlink, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { type CliResult, runCli, runEmulator, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';

/**
 * A policy written carelessly or with intent: every problem is a configuration error, exit 2, named
 * with its path, without a stack trace and before any network call.
 */
describe('a hostile or careless policy', () => {
  const fx = useCliFixture();

  async function validate(...more: string[]): Promise<CliResult> {
    const result = await runCli(['validate', '--config', 'rotation.yaml', '--dotenv', fx.envFile, ...more], { cwd: fx.dir });
    fx.results.push(result);
    return result;
  }
  const sink = (path: string) => ({ type: 'file', path });

  function expectRefused(result: CliResult, ...problems: RegExp[]) {
    expect(result.code, result.stdout + result.stderr).toBe(2);
    for (const problem of problems) expect(result.stderr).toMatch(problem);
    expect(result.stderr).not.toMatch(/^\s+at /m); // no stack trace
    expect(fx.emulator.requests).toEqual([]);
  }

  it.each([['..'], ['.'], ['a/b'], ['../../_emulator/faults']])('refuses the token id %j', async (id) => {
    await writePolicy(fx.dir, { version: 1, tokens: [{ name: 'app', id, sinks: [sink('app.token')] }] });
    expectRefused(await validate(), /tokens\[0\]\.id: /);
  });

  it('refuses sinks that would write into the state folder, over the policy file or over the environment file', async () => {
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [
        { name: 'a', id: 'a1', sinks: [sink('state/journal/a.json')] },
        { name: 'b', id: 'b1', sinks: [sink('state')] },
        { name: 'c', id: 'c1', sinks: [sink('rotation.yaml')] },
        { name: 'd', id: 'd1', sinks: [sink('rotator.env')] },
        // Every kind of file the file backend keeps: records, journal entries (above) and lock files.
        { name: 'e', id: 'e1', sinks: [sink('state/tokens/e.json')] },
        { name: 'f', id: 'f1', sinks: [sink('state/locks/f.lock')] },
      ],
    });
    expectRefused(
      await validate(),
      /tokens\[0\]\.sinks\[0\]: writes inside the state folder/,
      /tokens\[1\]\.sinks\[0\]: writes inside the state folder/,
      /tokens\[2\]\.sinks\[0\]: would overwrite the policy file/,
      /tokens\[3\]\.sinks\[0\]: would overwrite .*rotator\.env, which the environment is read from/,
      /tokens\[4\]\.sinks\[0\]: writes inside the state folder/,
      /tokens\[5\]\.sinks\[0\]: writes inside the state folder/,
    );
  });

  it('refuses a sink that reaches the state folder through a symbolic link', async () => {
    await mkdir(join(fx.dir, 'state'), { recursive: true });
    await symlink(join(fx.dir, 'state'), join(fx.dir, 'also-state'));
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [{ name: 'a', id: 'a1', sinks: [{ ...sink('also-state/a.token'), allowSymlinks: true }] }],
    });
    expectRefused(await validate(), /tokens\[0\]\.sinks\[0\]: writes inside the state folder/);
  });

  it('refuses two tokens writing one file through a symlinked folder, and a link in a sink path unless allowed', async () => {
    await mkdir(join(fx.dir, 'real'));
    await symlink(join(fx.dir, 'real'), join(fx.dir, 'link'));
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [
        { name: 'a', id: 'a1', sinks: [sink('real/app.token')] },
        { name: 'b', id: 'b1', sinks: [{ ...sink('link/app.token'), allowSymlinks: true }] },
        { name: 'c', id: 'c1', sinks: [sink('link/other.token')] },
      ],
    });
    expectRefused(
      await validate(),
      /tokens\[1\]\.sinks\[0\]: writes to the same place as tokens\[0\]\.sinks\[0\]/,
      /tokens\[2\]\.sinks\[0\]\.path: .*symbolic link.*allowSymlinks: true/,
    );
  });

  it.each([
    [
      'an alias bomb',
      'a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n',
      /rotation\.yaml:\d+:\d+: alias \*\w expands beyond the limit/,
    ],
    ['an undefined alias', 'version: 1\ntokens: *a\n', /rotation\.yaml:2:\d+: alias \*a is not defined/],
  ])('refuses %s with its line', async (_what, text, problem) => {
    await writeFile(join(fx.dir, 'rotation.yaml'), text);
    expectRefused(await validate(), problem);
  });

  it('refuses values that validate alone but cannot run', async () => {
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [
        { name: 'forever', id: 'f1', lifetime: '20000000w', sinks: [sink('f.token')] },
        { name: 'nul', id: 'n1', sinks: [sink('secrets/a\u0000b.token')] },
        { name: 'late', id: 'l1', jitter: '30d', sinks: [sink('l.token')] },
      ],
    });
    expectRefused(
      await validate(),
      /tokens\[0\]\.lifetime: '20000000w' is too long/,
      /tokens\[1\]\.sinks\[0\]\.path: must not contain a NUL byte/,
      /tokens\[2\]\.jitter: must be at most 24d/,
    );
  });

  it('names a port in use for the emulator as a usage error, without a stack trace', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    const result = await runEmulator(['--port', String(port)], { cwd: fx.dir });
    fx.results.push(result);
    await new Promise<void>((resolve) => taken.close(() => resolve()));
    expectRefused(result, new RegExp(`--port: cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use`));
  });
});

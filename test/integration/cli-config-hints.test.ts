import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { runCli, writePolicy } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/** Enough of an environment for `validate` to accept: nothing here is ever called. */
const SERVICE = { ROTATOR_API_URL: 'http://127.0.0.1:9', ROTATOR_ACCESS_TOKEN: 'canary-static-bearer-2401' };

describe('configuration messages that name the fix', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await makeTempDir();
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const validate = (env: Record<string, string>, ...args: string[]) =>
    runCli(['validate', '--config', 'rotation.yaml', ...args], { cwd: dir, env: { ...SERVICE, ...env } });
  const oneToken = (extra: Record<string, unknown> = {}) =>
    writePolicy(dir, { version: 1, ...extra, tokens: [{ name: 'ingest', id: 'tok-1', sinks: [{ type: 'file', path: 'ingest.token' }] }] });

  it('warns once of a ROTATOR_* variable nothing reads, with the name it most likely meant, and still runs', async () => {
    await oneToken();
    const result = await validate({ ROTATOR_STATE_BACKED: 'kubernetes' });
    expect(result.code).toBe(0);
    const warning =
      'ROTATOR_STATE_BACKED (set in the environment) is not a variable token-rotator reads, so it is ignored; did you mean ROTATOR_STATE_BACKEND?';
    expect(result.stderr.split(warning)).toHaveLength(2);
  });

  it('warns of one in the --dotenv file, naming the file', async () => {
    await oneToken();
    await writeFile(join(dir, 'rotator.env'), 'ROTATOR_LOG_LEVL=debug\nROTATOR_STATE_KEY_FIEL=/run/key\n');
    const result = await validate({}, '--dotenv', 'rotator.env');
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      'ROTATOR_LOG_LEVL (set in rotator.env) is not a variable token-rotator reads, so it is ignored; did you mean ROTATOR_LOG_LEVEL?',
    );
    expect(result.stderr).toContain('did you mean ROTATOR_STATE_KEY_FILE?');
  });

  it('names the typo beside the variable a refused environment lacks', async () => {
    await oneToken();
    const result = await runCli(['validate', '--config', 'rotation.yaml'], {
      cwd: dir,
      env: { ROTATOR_API_UR: 'http://127.0.0.1:9', ROTATOR_ACCES_TOKEN: 'canary-static-bearer-2402' },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'env.ROTATOR_API_URL: required; ROTATOR_API_UR is set (in the environment): a typo of ROTATOR_API_URL?',
    );
    expect(result.stderr).toContain('ROTATOR_ACCES_TOKEN is set (in the environment): a typo of ROTATOR_ACCESS_TOKEN?');
    expect(result.stderr).not.toContain('canary-static-bearer-2402');
  });

  it('does not warn of a variable the policy takes a value from, nor of its _FILE', async () => {
    await oneToken({ notifications: [{ type: 'webhook', urlFrom: 'ROTATOR_TEAM_WEBHOOK' }] });
    await writeFile(join(dir, 'hook.url'), 'http://127.0.0.1:9/hook\n');
    const result = await validate({ ROTATOR_TEAM_WEBHOOK_FILE: join(dir, 'hook.url'), ROTATOR_STATE_BACKEND: 'file' });
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain('not a variable token-rotator reads');
  });

  it('suggests the key a mistyped policy key meant, at file:line:col, in the text and in validate --json', async () => {
    await writeFile(
      join(dir, 'rotation.yaml'),
      [
        'version: 1',
        'tokens:',
        '  - name: ingest',
        '    id: tok-1',
        '    renewbefore: 3d',
        '    sinks: [{ type: file, path: a.token }]',
        '',
      ].join('\n'),
    );
    const text = await validate({});
    expect(text.code).toBe(2);
    expect(text.stderr).toContain(
      `${join(dir, 'rotation.yaml')}:5:5: tokens[0].renewbefore: unknown key; did you mean renewBefore? (allowed: name,`,
    );
    const json = await validate({}, '--json');
    expect(json.code).toBe(2);
    expect((JSON.parse(json.stdout) as { problems: unknown[] }).problems).toEqual([
      {
        path: 'tokens[0].renewbefore',
        message: expect.stringMatching(/^unknown key; did you mean renewBefore\? \(allowed: /),
        line: 5,
        column: 5,
      },
    ]);
  });

  it('places a problem of a value, not only of a key, in the text', async () => {
    await writeFile(
      join(dir, 'rotation.yaml'),
      ['version: 1', 'tokens:', '  - name: ingest', '    id: 42', '    sinks: []', ''].join('\n'),
    );
    const text = await validate({});
    expect(text.code).toBe(2);
    expect(text.stderr).toMatch(
      new RegExp(`${join(dir, 'rotation.yaml').replace(/[.]/g, '\\.')}:4:5: tokens\\[0\\]\\.id: expected string`),
    );
  });
});

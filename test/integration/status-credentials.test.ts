import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { expect, it } from 'vitest';

import { runCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';

const DAY = 24 * 3600_000;
const fx = useCliFixture();

/** Only the lines of the env file that are not the service's URL or credentials. */
async function stateOnlyEnv(): Promise<string> {
  const lines = (await readFile(fx.envFile, 'utf8')).split('\n').filter((l) => l && !/^ROTATOR_(API_URL|OAUTH_|ACCESS_TOKEN)/.test(l));
  const file = join(fx.dir, 'state-only.env');
  await writeFile(file, lines.join('\n') + '\n', { mode: 0o600 });
  return file;
}

it('status reads state and sinks without the service URL, OAuth settings or notification URLs', async () => {
  const token = fx.emulator.store.add({ name: 'ingest', expiresAt: new Date(Date.now() + 2 * DAY) });
  await writePolicy(fx.dir, {
    version: 1,
    notifications: [{ type: 'slack', urlFrom: 'ROTATOR_SLACK_WEBHOOK' }],
    tokens: [{ name: 'ingest', id: token.id, sinks: [{ type: 'file', path: 'secrets/ingest.token' }] }],
  });
  const once = await runCli(['once', '--config', 'rotation.yaml', '--dotenv', fx.envFile], {
    cwd: fx.dir,
    env: { ROTATOR_SLACK_WEBHOOK: 'http://127.0.0.1:9/hook' },
  });
  fx.results.push(once);
  expect(once.code).toBe(0);

  const status = await runCli(['status', '--json', '--config', 'rotation.yaml', '--dotenv', await stateOnlyEnv()], { cwd: fx.dir });
  fx.results.push(status);
  expect(status.stderr).not.toMatch(/ROTATOR_API_URL|ROTATOR_OAUTH|ROTATOR_SLACK_WEBHOOK|no credentials/);
  expect(status.code).toBe(0);
  expect(status.stdout).toContain('"ingest"');
});

it('the commands that call the service still demand its settings, each named (exit 2)', async () => {
  const token = fx.emulator.store.add({ name: 'ingest', expiresAt: new Date(Date.now() + 2 * DAY) });
  await writePolicy(fx.dir, { version: 1, tokens: [{ name: 'ingest', id: token.id, sinks: [{ type: 'file', path: 's/i.token' }] }] });
  const envFile = await stateOnlyEnv();
  for (const command of ['once', 'plan', 'validate']) {
    const result = await runCli([command, '--config', 'rotation.yaml', '--dotenv', envFile], { cwd: fx.dir });
    fx.results.push(result);
    expect(result.code, command).toBe(2);
    expect(result.stderr, command).toContain('env.ROTATOR_API_URL');
  }
});

it('status still reports a broken state setting with exit 2', async () => {
  await writePolicy(fx.dir, { version: 1, tokens: [{ name: 'a', id: 'a1', sinks: [{ type: 'file', path: 's/a.token' }] }] });
  const result = await runCli(['status', '--config', 'rotation.yaml'], { cwd: fx.dir, env: { ROTATOR_STATE_BACKEND: 'floppy' } });
  fx.results.push(result);
  expect(result.code).toBe(2);
  expect(result.stderr).toContain('env.ROTATOR_STATE_BACKEND');
  expect(result.stderr).not.toContain('ROTATOR_API_URL');
});

import { randomBytes } from 'node:crypto';
import { access, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { envFileText } from 'token-rotator-emulator';
import { describe, expect, it } from 'vitest';

import { writePushProgram } from '../doubles/exec/push-program.js';
import { type CliResult, runCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';

/**
 * The program is given nothing the rotator authenticates with: passEnv naming one of its settings
 * or credentials, or a variable the policy takes a credential from, is a configuration error (exit
 * 2, before any network call, with the entry's path); without passEnv nothing leaks either.
 */
describe("an exec sink's passEnv", () => {
  const fx = useCliFixture();

  async function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
    const result = await runCli([...args, '--config', 'rotation.yaml'], { cwd: fx.dir, env });
    fx.results.push(result);
    return result;
  }

  function expectRefused(result: CliResult, problems: string[]) {
    expect(result.code, result.stdout + result.stderr).toBe(2);
    // each problem as `path: message`, the policy file's `file:line:col: ` before it set aside
    const said = result.stderr.split('\n').map((line) => line.trim().replace(/^\S+:\d+:\d+: /, ''));
    for (const problem of problems) expect(said).toContain(problem);
    expect(result.stderr).not.toMatch(/^\s+at /m);
    expect(fx.emulator.requests).toEqual([]);
  }

  /** One token whose last sink is the exec sink; `others` come before it. */
  async function execPolicy(passEnv: string[], more: { others?: unknown[]; policy?: Record<string, unknown> } = {}): Promise<void> {
    const program = await writePushProgram(fx.dir);
    const token = fx.emulator.store.add({ name: 'pushed', expiresAt: new Date(Date.now() + 60 * 86400_000) });
    const exec = { type: 'exec', command: [program, '--dest', 'pushed.token'], passEnv };
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [{ name: 'pushed', id: token.id, sinks: [...(more.others ?? []), exec] }],
      ...more.policy,
    });
  }

  it("refuses the rotator's client secret from --dotenv and its state key from _FILE: the program never runs", async () => {
    // As the red team had it: the client secret only in the dotenv file, the key only through its _FILE.
    const stateKey = randomBytes(32).toString('base64');
    await writeFile(join(fx.dir, 'state.key'), stateKey, { mode: 0o600 });
    await writeFile(
      join(fx.dir, 'red-team.env'),
      envFileText({ ...fx.emulator.rotatorEnv(), ROTATOR_STATE_DIR: join(fx.dir, 'state'), ROTATOR_STATE_KEY_FILE: 'state.key' }),
      { mode: 0o600 },
    );
    await execPolicy(['ROTATOR_OAUTH_CLIENT_SECRET', 'ROTATOR_STATE_KEY']);
    for (const command of [['validate'], ['once']]) {
      const result = await cli([...command, '--dotenv', 'red-team.env']);
      expectRefused(result, [
        "tokens[0].sinks[0].passEnv[0]: ROTATOR_OAUTH_CLIENT_SECRET is the rotator's own setting (ROTATOR_*): never passed to a program; give it credentials of its own",
        "tokens[0].sinks[0].passEnv[1]: ROTATOR_STATE_KEY is the rotator's own setting (ROTATOR_*): never passed to a program; give it credentials of its own",
      ]);
      expect(result.stderr).not.toContain(stateKey);
    }
    await expect(access(join(fx.dir, 'pushed.token.seen'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses every ROTATOR_* name, the credentials the SDKs read and their _FILE; a region or a name of its own passes', async () => {
    await execPolicy([
      'AWS_REGION',
      'TEAM',
      'ROTATOR_LOG_LEVEL',
      'ROTATOR_STATE_KEY_FILE',
      'AWS_SECRET_ACCESS_KEY',
      'AWS_SESSION_TOKEN',
      'AZURE_CLIENT_SECRET',
      'GOOGLE_APPLICATION_CREDENTIALS',
      'VAULT_TOKEN',
      'VAULT_TOKEN_FILE',
      'KUBECONFIG',
    ]);
    const result = await cli(['validate', '--dotenv', fx.envFile]);
    const refused = (index: number, why: string) =>
      `tokens[0].sinks[0].passEnv[${index}]: ${why}: never passed to a program; give it credentials of its own`;
    expectRefused(result, [
      refused(2, "ROTATOR_LOG_LEVEL is the rotator's own setting (ROTATOR_*)"),
      refused(3, "ROTATOR_STATE_KEY_FILE is the rotator's own setting (ROTATOR_*)"),
      refused(4, 'AWS_SECRET_ACCESS_KEY is a credential (the AWS SDK)'),
      refused(5, 'AWS_SESSION_TOKEN is a credential (the AWS SDK)'),
      refused(6, 'AZURE_CLIENT_SECRET is a credential (the Azure SDK)'),
      refused(7, 'GOOGLE_APPLICATION_CREDENTIALS is a credential (the Google Cloud SDK)'),
      refused(8, "VAULT_TOKEN is a credential (the Vault sink's default token)"),
      refused(9, "VAULT_TOKEN_FILE names the file of VAULT_TOKEN, a credential (the Vault sink's default token)"),
      refused(10, 'KUBECONFIG is a credential (the Kubernetes sink and state)'),
    ]);
    expect(result.stderr).not.toMatch(/passEnv\[[01]\]/);
  });

  it('refuses a variable another part of the policy takes a credential from, or its _FILE, naming both places', async () => {
    await execPolicy(['MY_VAULT_TOKEN', 'HOOK_KEY_FILE', 'NOTIFY_URL', 'TEAM'], {
      others: [
        {
          type: 'vault',
          address: 'https://vault.example:8200',
          path: 'apps/pushed',
          auth: { method: 'token', tokenFrom: 'MY_VAULT_TOKEN' },
        },
      ],
      policy: {
        defaults: { reload: [{ type: 'webhook', urlFrom: 'HOOK_URL', secretFrom: 'HOOK_KEY' }] },
        notifications: [{ type: 'webhook', urlFrom: 'NOTIFY_URL' }],
      },
    });
    const result = await cli(['validate', '--dotenv', fx.envFile], {
      MY_VAULT_TOKEN: 'vault-canary-token',
      HOOK_URL: 'https://hooks.example/reload',
      HOOK_KEY: 'hook-canary-key',
      NOTIFY_URL: 'https://notify.example/hook',
    });
    expectRefused(result, [
      'tokens[0].sinks[1].passEnv[0]: MY_VAULT_TOKEN is the credential tokens[0].sinks[0].auth.tokenFrom takes: never passed to a program',
      'tokens[0].sinks[1].passEnv[1]: HOOK_KEY_FILE names the file of HOOK_KEY, the credential defaults.reload[0].secretFrom takes: never passed to a program',
      'tokens[0].sinks[1].passEnv[2]: NOTIFY_URL is the credential notifications[0].urlFrom takes: never passed to a program',
    ]);
    expect(result.stderr).not.toMatch(/passEnv\[3\]/);
    expect(result.stderr).not.toMatch(/vault-canary-token|hook-canary-key/);
  });

  it("gives the program nothing of the rotator's environment but the base set and what passEnv names", async () => {
    await execPolicy(['TEAM']);
    const result = await cli(['once', '--dotenv', fx.envFile], {
      HOME: fx.dir,
      TEAM: 'ingest',
      AWS_SECRET_ACCESS_KEY: 'aws-canary-secret',
      VAULT_TOKEN: 'vault-canary-token',
      SOME_OTHER: 'other',
    });
    expect(result.code, result.stderr).toBe(0);
    const { env } = JSON.parse(await readFile(join(fx.dir, 'pushed.token.seen'), 'utf8')) as { env: Record<string, string> };
    const own = Object.keys(env).filter((name) => !name.startsWith('TOKEN_ROTATOR_'));
    expect(own.sort()).toEqual(['HOME', 'PATH', 'TEAM']);
  });
});

import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { Secret } from '../../src/secret.js';
import { type ExecSinkConfig, execSinkType } from '../../src/sinks/exec/exec-sink.js';
import { FILE_FORMATS } from '../../src/sinks/file/file-format.js';
import type { SinkClient, TokenMeta } from '../../src/sinks/sink.js';
import { sinkContract } from '../contracts/sink-contract.js';
import { writePushProgram } from '../doubles/exec/push-program.js';
import { silentLogger } from '../fakes/fake-deps.js';
import { runCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { itemsOf } from '../helpers/output-items.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let dir: string;
let push: string;
let count = 0;
const ENV = {
  PATH: process.env.PATH ?? '',
  HOME: '/nonexistent',
  ROTATOR_OAUTH_CLIENT_SECRET: 'client-secret-canary-9d1f',
  TEAM: 'ingest',
};

beforeAll(async () => {
  dir = await makeTempDir();
  push = await writePushProgram(dir);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

function configOf(raw: Record<string, unknown>): ExecSinkConfig {
  const parsed = execSinkType.parse({ type: 'exec', ...raw }, { policyDir: dir, env: ENV });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.config;
}
const destination = () => join(dir, `dest-${++count}`, 'token');
const destOf = (config: ExecSinkConfig) => config.command[2]!;

for (const format of FILE_FORMATS) {
  sinkContract(`exec (${format})`, { ownership: 'adopts', preflight: true }, () => ({
    type: execSinkType,
    context: { env: ENV, reference: () => undefined },
    // What is there is the program's business: like a file, it is read back and adopted.
    async config() {
      const dest = destination();
      await mkdir(join(dest, '..'), { recursive: true });
      return configOf({
        command: ['./push.mjs', '--dest', dest],
        read: ['./push.mjs', '--read', dest],
        preflight: ['./push.mjs', '--check', dest],
        format,
      });
    },
    carriesMetadata: (config) => config.format === 'json',
    async plantForeign(config, secret) {
      const text =
        format === 'env'
          ? `${config.envKey}=${secret.reveal()}\n`
          : format === 'json'
            ? JSON.stringify({ token: secret.reveal() })
            : secret.reveal();
      await writeFile(destOf(config), text);
    },
    async breakDestination(config) {
      // A folder where the program must write a file: it fails, as a real push would.
      await mkdir(destOf(config), { recursive: true });
    },
  }));
}

describe('the exec sink, beyond the contract', () => {
  const meta: TokenMeta = {
    name: 'ingest',
    id: 'tok-7',
    expiresAt: new Date('2027-01-01T00:00:00.000Z'),
    rotationId: 'rot-7',
    rotatedAt: new Date('2026-11-22T12:00:00.000Z'),
  };
  const open = (): Promise<SinkClient<ExecSinkConfig>> =>
    execSinkType.open({ logger: silentLogger(), env: ENV, reference: () => undefined });
  const seen = async (config: ExecSinkConfig) =>
    JSON.parse(await readFile(`${destOf(config)}.seen`, 'utf8')) as { argv: string[]; env: Record<string, string> };

  it("gives the secret on stdin only: never in argv or the environment, and none of the rotator's own credentials", async () => {
    const dest = destination();
    await mkdir(join(dest, '..'), { recursive: true });
    const config = configOf({ command: [push, '--dest', dest], passEnv: ['TEAM'] });
    const client = await open();
    expect(await client.write(config, new Secret('exec-secret-canary-41c2'), meta, {})).toBe('created');
    expect(await readFile(dest, 'utf8')).toBe('exec-secret-canary-41c2');
    const { argv, env } = await seen(config);
    expect(JSON.stringify(argv)).not.toContain('exec-secret-canary-41c2');
    expect(JSON.stringify(env)).not.toContain('exec-secret-canary-41c2');
    expect(env).toMatchObject({
      TOKEN_ROTATOR_OPERATION: 'write',
      TOKEN_ROTATOR_NAME: 'ingest',
      TOKEN_ROTATOR_ID: 'tok-7',
      TOKEN_ROTATOR_EXPIRES_AT: '2027-01-01T00:00:00.000Z',
      TOKEN_ROTATOR_ROTATION_ID: 'rot-7',
      TOKEN_ROTATOR_ROTATED_AT: '2026-11-22T12:00:00.000Z',
      TEAM: 'ingest',
    });
    expect(env.ROTATOR_OAUTH_CLIENT_SECRET).toBeUndefined();
    expect(await client.write(config, new Secret('exec-secret-canary-41c2'), meta, {})).toBe('unchanged');
  });

  it('stops a program that overruns its timeout, and says so', async () => {
    const dest = destination();
    await mkdir(join(dest, '..'), { recursive: true });
    const config = configOf({ command: [push, '--dest', dest, '--sleep', '60000'], timeout: '1s' });
    const started = Date.now();
    await expect((await open()).write(config, new Secret('s'), meta, {})).rejects.toMatchObject({
      code: 'ERR_SINK',
      message: expect.stringContaining('did not finish within 1s'),
    });
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('names a failed program and what it said, without the secret it echoed', async () => {
    const dest = destination();
    await mkdir(join(dest, '..'), { recursive: true });
    const config = configOf({ command: [push, '--dest', dest, '--fail'] });
    const error = await (await open()).write(config, new Secret('echoed-canary-secret-77ab'), meta, {}).catch((e: unknown) => e as Error);
    expect(error).toMatchObject({
      code: 'ERR_SINK',
      message: expect.stringMatching(/^write through exec .*push\.mjs .* failed: the program exited with 1: could not push: \[REDACTED\]/),
    });
    expect(String(error)).not.toContain('echoed-canary-secret-77ab');
  });

  it('refuses, when the policy is read, a program that is not there or not executable, and bad settings', () => {
    const problems = (raw: Record<string, unknown>) => {
      const parsed = execSinkType.parse({ type: 'exec', ...raw }, { policyDir: dir, env: ENV });
      return parsed.ok ? [] : parsed.issues.map((i) => `${i.path}: ${i.message}`);
    };
    expect(problems({ command: ['./no-such-program'] })).toEqual(['command[0]: ./no-such-program is not an executable file']);
    expect(problems({ command: ['no-such-program-anywhere'] })).toEqual([
      'command[0]: no-such-program-anywhere is not an executable program in PATH',
    ]);
    expect(problems({ command: 'push.mjs --dest x' })).toEqual([expect.stringMatching(/^command: /)]);
    expect(problems({ command: [] })).toEqual(['command: must name a program']);
    expect(problems({ command: [push], timeout: '11m' })).toEqual(['timeout: must be at most 10m']);
    expect(problems({ command: [push], read: ['./missing-reader'] })).toEqual(['read[0]: ./missing-reader is not an executable file']);
    expect(problems({ command: [push], passEnv: ['TEAM', 'ROTATOR_STATE_KEY', 'AWS_SECRET_ACCESS_KEY_FILE', 'AWS_REGION'] })).toEqual([
      "passEnv[1]: ROTATOR_STATE_KEY is the rotator's own setting (ROTATOR_*): never passed to a program; give it credentials of its own",
      'passEnv[2]: AWS_SECRET_ACCESS_KEY_FILE names the file of AWS_SECRET_ACCESS_KEY, a credential (the AWS SDK): never passed to a program; give it credentials of its own',
    ]);
    // A program named without a path is found in PATH, as a shell would find it.
    expect(problems({ command: ['sh', '-c', 'true'] })).toEqual([]);
  });

  it('is write-only without a read program: the type says so, and read asks nothing', async () => {
    const config = configOf({ command: [push, '--dest', destination()] });
    expect(execSinkType.readable!(config)).toBe(false);
    expect(await (await open()).read(config, {})).toBeUndefined();
  });
});

describe('an exec sink in a run', () => {
  const fx = useCliFixture();

  it('write-only: the first run delivers to it (nothing was ever given to it), later runs leave it alone', async () => {
    const program = await writePushProgram(fx.dir);
    const token = fx.emulator.store.add({ name: 'pushed', expiresAt: new Date(Date.now() + 60 * 86400_000) });
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [{ name: 'pushed', id: token.id, sinks: [{ type: 'exec', command: [program, '--dest', 'pushed.token'], format: 'json' }] }],
    });
    const cli = async () => {
      const result = await runCli(['once', '--json', '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir });
      fx.results.push(result);
      return result;
    };
    const first = await cli();
    expect(first.code, first.stderr).toBe(0);
    const [outcome] = itemsOf(first.stdout) as Array<{ action: string; reason: string; newId: string; sinks: unknown[] }>;
    expect(outcome).toMatchObject({ action: 'rotate', reason: expect.stringContaining('write-only: not delivered to yet') });
    const pushed = JSON.parse(await readFile(join(fx.dir, 'pushed.token'), 'utf8')) as { id: string; rotationId: string };
    expect(pushed.id).toBe(outcome!.newId);
    const second = await cli();
    expect(second.code, second.stderr).toBe(0);
    expect(itemsOf(second.stdout)[0]).toMatchObject({ action: 'skip' });
  });
});

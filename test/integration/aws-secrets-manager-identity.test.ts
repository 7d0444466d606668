import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { childProcessAwsEnvironment } from '../doubles/aws-secrets-manager/aws-environment.js';
import { type SecretsManagerDouble, startSecretsManagerDouble } from '../doubles/aws-secrets-manager/start-secrets-manager-double.js';
import { type CliResult, runCli, writePolicy, writeTokenPolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { journalEntry, putLegacyEntry } from '../helpers/journal-entries.js';

/*
 * Issue 20, finding 4: `prod/x` and its ARN in two tokens' sinks are one secret. `validate` passed,
 * and each run regenerated one of the two tokens forever, each app holding the other's secret half
 * the time. Now two spellings of one destination are a configuration error before any call, and
 * what only the service knows (the region an AWS profile gives) is found by `validate --online`.
 */

const inDays = (d: number) => new Date(Date.now() + d * 86400_000);
let aws: SecretsManagerDouble;

beforeAll(async () => {
  aws = await startSecretsManagerDouble({ region: 'eu-west-1', account: '123456789012' });
});
afterAll(() => aws.close());

let secrets = 0;
const aName = () => `prod/x${++secrets}`;
const arnOf = (name: string, account = '123456789012', region = 'eu-west-1') =>
  `arn:aws:secretsmanager:${region}:${account}:secret:${name}`;

describe('one AWS secret, spelled two ways', () => {
  const fx = useCliFixture();

  async function cli(args: string[], env: Record<string, string> = childProcessAwsEnvironment(aws)): Promise<CliResult> {
    const result = await runCli([...args, '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir, env });
    fx.results.push(result);
    return result;
  }

  /** Two tokens, the first with a file sink before its AWS sink, so the paths say which sink is meant. */
  async function twoTokens(first: Record<string, unknown>, second: Record<string, unknown>) {
    const a = fx.emulator.store.add({ name: 'alpha', expiresAt: inDays(60) });
    const b = fx.emulator.store.add({ name: 'beta', expiresAt: inDays(60) });
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [
        {
          name: 'alpha',
          id: a.id,
          sinks: [
            { type: 'file', path: 'alpha.token' },
            { type: 'aws-secrets-manager', ...first },
          ],
        },
        { name: 'beta', id: b.id, sinks: [{ type: 'aws-secrets-manager', ...second }] },
      ],
    });
  }

  it.each([
    ['a name and its partial ARN', (name: string) => [{ secretId: name }, { secretId: arnOf(name) }]],
    [
      'a name with its region and its full ARN',
      (name: string) => [{ secretId: name, region: 'eu-west-1' }, { secretId: `${arnOf(name)}-AbCdEf` }],
    ],
    ['a full ARN and a partial ARN', (name: string) => [{ secretId: `${arnOf(name)}-Zy12Xw` }, { secretId: arnOf(name) }]],
  ])('%s: a configuration error naming both sinks, before any call', async (_, spell) => {
    const [first, second] = spell(aName());
    await twoTokens(first!, second!);
    const before = aws.requests.length;
    for (const command of [['validate'], ['once']]) {
      const result = await cli(command);
      expect(result.code, result.stdout).toBe(2);
      expect(result.stderr).toMatch(/tokens\[1\]\.sinks\[0\]: writes to the same place as tokens\[0\]\.sinks\[1\]/);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
    expect(aws.requests.length).toBe(before);
    expect(fx.emulator.requests.filter((r) => r.op === 'regenerate')).toHaveLength(0);
  });

  it('the same name in another region, or an ARN in another account, is another secret', async () => {
    const name = aName();
    await twoTokens({ secretId: name }, { secretId: arnOf(name, '123456789012', 'us-east-1') });
    expect((await cli(['validate'])).code).toBe(0);
    await twoTokens({ secretId: arnOf(name, '111111111111') }, { secretId: `${arnOf(name, '222222222222')}-AbCdEf` });
    expect((await cli(['validate'])).code).toBe(0);
  });

  it('a journal entry that marks a delivery by the whole ARN, as entries written before did, still counts it', async () => {
    const name = aName();
    const arn = aws.plant({ name, value: 'xaat-canary-before', tags: { 'managed-by': 'token-rotator' } });
    const token = fx.emulator.store.add({ name: 'gamma', expiresAt: inDays(1) });
    await writeTokenPolicy(fx.dir, 'gamma', token.id, [
      { type: 'file', path: 'gamma.token' },
      { type: 'aws-secrets-manager', secretId: arn },
    ]);
    // Entries from before were not authenticated either: this run keeps no state key, so the
    // entry edited below to look like one is not refused for a MAC it could not have had.
    const noKey = { ...childProcessAwsEnvironment(aws), ROTATOR_STATE_KEY: '' };
    // Stopped after both deliveries were marked, before the commit.
    const stopped = await cli(['once'], { ...noKey, ROTATOR_TEST_FAILPOINT: 'delivered:2' });
    expect(stopped.signal).toBe('SIGKILL');
    const entry = (await journalEntry(join(fx.dir, 'state'), 'gamma'))!;
    const canonical = `aws-secrets-manager:eu-west-1:123456789012:${name}`;
    expect(entry.delivered).toContain(canonical);
    // The mark as the version before this one wrote it (the region, then the ARN as the policy gave
    // it), in the per-name file that version kept its entries in.
    const old = `aws-secrets-manager:eu-west-1:${arn}`;
    await putLegacyEntry(join(fx.dir, 'state'), { ...entry, delivered: entry.delivered.map((t) => (t === canonical ? old : t)) });

    const status = await cli(['status', '--json'], noKey);
    const [item] = JSON.parse(status.stdout).items as Array<{ name: string; pending: string[] }>;
    expect(item!.pending).toEqual([]);
    const resumed = await cli(['once'], noKey);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(aws.valueOf(arn)).toBe(await readFile(join(fx.dir, 'gamma.token'), 'utf8'));
    const record = JSON.parse(await readFile(join(fx.dir, 'state/tokens/gamma.json'), 'utf8')) as { sinks: Record<string, unknown> };
    expect(Object.keys(record.sinks)).toContain(canonical);
  });

  it('validate --online resolves a name whose region only the AWS profile knows, and finds its partial ARN the same secret', async () => {
    const name = aName();
    const arn = aws.plant({ name, value: 'xaat-canary-identity', tags: { 'managed-by': 'token-rotator' } });
    await twoTokens({ secretId: name }, { secretId: arnOf(name) });
    // The region from the profile, not AWS_REGION: nothing offline says where the name is.
    const config = join(fx.dir, 'aws-config');
    await writeFile(config, '[default]\nregion = eu-west-1\n');
    const env: Record<string, string> = { ...childProcessAwsEnvironment(aws), AWS_CONFIG_FILE: config };
    delete env.AWS_REGION;

    const offline = await cli(['validate'], env);
    expect(offline.code, offline.stderr).toBe(0);
    expect(offline.stderr).toMatch(/tokens\[1\]\.sinks\[0\].*may write to the same place as tokens\[0\]\.sinks\[1\]/);

    const online = await cli(['validate', '--online', '--json'], env);
    expect(online.code, online.stderr).toBe(1);
    const items = JSON.parse(online.stdout).items as Array<{ check: string; target: string; result: string; note?: string }>;
    expect(items).toContainEqual({
      check: 'sink',
      target: 'tokens[0].sinks[1] and tokens[1].sinks[0]',
      result: 'failed',
      note: expect.stringContaining(`one destination: ${arn}`),
    });
    // Each of them could be written: only together are they wrong.
    expect(items.filter((i) => i.check === 'sink' && i.target.startsWith('aws-secrets-manager')).every((i) => i.result === 'ok')).toBe(
      true,
    );
  });
});

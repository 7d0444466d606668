import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { SecretsManagerClient, UntagResourceCommand } from '@aws-sdk/client-secrets-manager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  childProcessAwsEnvironment,
  setAwsEnvironment,
  staticCredentialsEnvironment,
} from '../doubles/aws-secrets-manager/aws-environment.js';
import { type SecretsManagerDouble, startSecretsManagerDouble } from '../doubles/aws-secrets-manager/start-secrets-manager-double.js';
import { clientSecretEnv } from '../doubles/azure-key-vault/in-process.js';
import { type AzureKeyVaultDouble, startAzureKeyVaultDouble } from '../doubles/azure-key-vault/start-azure-key-vault-double.js';
import { writePushProgram } from '../doubles/exec/push-program.js';
import {
  README_ROLE,
  type SecretManagerDouble,
  startSecretManagerDouble,
} from '../doubles/gcp-secret-manager/start-secret-manager-double.js';
import { startVaultDouble, type VaultDouble } from '../doubles/vault/start-vault-double.js';
import { sinkPolicy } from '../doubles/vault/vault-here.js';
import { type CliResult, runCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { type KubernetesHere, kubernetesHere, secretData } from '../helpers/kubernetes.js';
import { itemsOf } from '../helpers/output-items.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/*
 * One token delivered to a file, a Kubernetes Secret, Vault, AWS Secrets Manager, Google Secret
 * Manager, Azure Key Vault and a program of the user's, by the built CLI in a child process, each
 * secret manager reached through its vendor's own client library and the platform's standard
 * credentials, as a new user would set it up. Every double counts versions, so a duplicate write
 * after a crash shows.
 */

const DAY = 24 * 3600_000;
const inDays = (d: number) => new Date(Date.now() + d * DAY);
const PROJECT = 'rotator-project';
const SINKS = ['file', 'kubernetes-secret', 'vault', 'aws-secrets-manager', 'gcp-secret-manager', 'azure-key-vault', 'exec'] as const;
type SinkName = (typeof SINKS)[number];

let here: string;
let k: KubernetesHere;
let vault: VaultDouble;
let vaultToken: string;
let aws: SecretsManagerDouble;
let gcp: SecretManagerDouble;
let gcpKeyFile: string;
let azure: AzureKeyVaultDouble;
let azureEnv: Record<string, string>;
let pushProgram: string;
/** Trusted CAs of the doubles on TLS (Google's and Azure's), as an operator would give a private CA. */
let caFile: string;

beforeAll(async () => {
  here = await makeTempDir();
  [k, vault, aws, gcp, azure] = await Promise.all([
    kubernetesHere(here),
    startVaultDouble(),
    startSecretsManagerDouble(),
    startSecretManagerDouble({ projects: [{ id: PROJECT, number: '424242424242' }] }),
    startAzureKeyVaultDouble(),
  ]);
  vault.mount('secret');
  vault.policy('token-rotator', sinkPolicy('secret', 'apps/*'));
  vaultToken = vault.token({ policies: ['token-rotator'] });
  gcpKeyFile = join(here, 'gcp-key.json');
  await writeFile(gcpKeyFile, JSON.stringify(gcp.serviceAccount('token-rotator', README_ROLE)), { mode: 0o600 });
  azureEnv = clientSecretEnv(azure, azure.registerApp({ clientSecret: true }));
  caFile = join(here, 'doubles-ca.pem');
  await writeFile(caFile, `${gcp.ca}\n${azure.ca}`);
  pushProgram = await writePushProgram(here);
}, 60_000);

afterAll(async () => {
  await Promise.allSettled([k?.double.close(), vault?.close(), aws?.close(), gcp?.close(), azure?.close()]);
});

let tokens = 0;
/** Every marker-carrying sink says token-rotator manages it. */
const ALL_MARKED = {
  'kubernetes-secret': 'token-rotator',
  vault: 'token-rotator',
  aws: 'token-rotator',
  gcp: 'token-rotator',
  azure: 'token-rotator',
};
const run = promisify(execFile);

describe('one token, every sink: a file, a Kubernetes Secret, four secret managers and a program', () => {
  const fx = useCliFixture();

  /** The process environment: each vendor's SDK reads its settings there (never the policy). */
  function processEnv(): Record<string, string> {
    return {
      ...k.env,
      ...childProcessAwsEnvironment(aws),
      ...azureEnv,
      // The Azure SDK goes through the double's proxy; nothing else may.
      NO_PROXY: 'localhost,127.0.0.1',
      GOOGLE_APPLICATION_CREDENTIALS: gcpKeyFile,
      NODE_EXTRA_CA_CERTS: caFile,
      VAULT_TOKEN: vaultToken,
    };
  }

  async function cli(args: string[], extra: Record<string, string> = {}): Promise<CliResult> {
    const result = await runCli([...args, '--config', 'rotation.yaml', '--dotenv', fx.envFile], {
      cwd: fx.dir,
      env: { ...processEnv(), ...extra },
    });
    fx.results.push(result);
    return result;
  }

  /** A token of its own per test, with a destination of its own in every sink. */
  async function setUp() {
    const n = ++tokens;
    const token = fx.emulator.store.add({ name: `ingest-${n}`, expiresAt: inDays(60) });
    const names = { k8s: `ingest-${n}`, vault: `apps/ingest-${n}`, aws: `prod/ingest-${n}`, gcp: `ingest-${n}`, azure: `ingest-${n}` };
    const pushed = join(fx.dir, 'pushed.token');
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [
        {
          name: token.name,
          id: token.id,
          sinks: [
            { type: 'file', path: 'ingest.token' },
            { type: 'kubernetes-secret', name: names.k8s, namespace: 'apps' },
            { type: 'vault', address: vault.url, path: names.vault },
            { type: 'aws-secrets-manager', secretId: names.aws, tags: { team: 'ingest' } },
            { type: 'gcp-secret-manager', project: PROJECT, secret: names.gcp, endpoint: gcp.endpoint, labels: { team: 'ingest' } },
            { type: 'azure-key-vault', vaultUrl: azure.vaultUrl(), name: names.azure, tags: { team: 'ingest' } },
            { type: 'exec', command: [pushProgram, '--dest', pushed], read: [pushProgram, '--read', pushed] },
          ],
        },
      ],
    });

    /** What each destination holds now. */
    async function held(): Promise<Record<SinkName, string | undefined>> {
      const file = (path: string) => readFile(path, 'utf8').catch(() => undefined);
      return {
        file: await file(join(fx.dir, 'ingest.token')),
        'kubernetes-secret': secretData(k.double, 'apps', names.k8s, 'token'),
        vault: vault.kv.get({ path: names.vault })?.data?.['token'] as string | undefined,
        'aws-secrets-manager': aws.valueOf(names.aws),
        'gcp-secret-manager': gcp.latestText(PROJECT, names.gcp),
        'azure-key-vault': azure.versions(names.azure).at(-1)?.value,
        exec: await file(pushed),
      };
    }
    /** How many versions each secret manager holds: one more than before per rotation, never two. */
    const versions = () => ({
      // Vault keeps ten versions by default (max_versions): its version number counts them all.
      vault: vault.kv.get({ path: names.vault })?.currentVersion ?? 0,
      aws: aws.versionCount(names.aws),
      gcp: gcp.versionCount(PROJECT, names.gcp),
      azure: azure.versions(names.azure).length,
    });
    const markers = () => ({
      'kubernetes-secret': (k.double.objects.get('secrets', 'apps', names.k8s)?.metadata as { labels?: Record<string, string> })?.labels?.[
        'app.kubernetes.io/managed-by'
      ],
      vault: vault.kv.get({ path: names.vault })?.customMetadata?.['managed-by'],
      aws: aws.snapshot(names.aws)?.tags['managed-by'],
      gcp: gcp.secret(PROJECT, names.gcp)?.labels['managed-by'],
      azure: azure.versions(names.azure).at(-1)?.tags?.['managed-by'],
    });
    const regenerates = () => fx.emulator.requests.filter((r) => r.op === 'regenerate' && r.committed).length;
    return { token, names, held, versions, markers, regenerates };
  }

  /** Every destination holds the same secret, and it is the current secret of token `id`. */
  async function expectEverywhere(held: Record<SinkName, string | undefined>, id: string) {
    const values = new Set(Object.values(held));
    expect(values.size, JSON.stringify(Object.keys(held).filter((sink) => !held[sink as SinkName]))).toBe(1);
    const [secret] = values;
    const response = await fetch(`${fx.emulator.apiUrl}/_emulator/whoami`, { headers: { authorization: `Bearer ${secret}` } });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { id: string }).id).toBe(id);
  }

  const outcomeOf = (result: CliResult) =>
    (itemsOf(result.stdout) as Array<{ action: string; newId: string; reason: string; sinks: unknown[] }>)[0]!;

  it('delivers everywhere with each marker, changes nothing on a second run, and heals destinations edited behind its back', async () => {
    const t = await setUp();

    const validate = await cli(['validate', '--online']);
    expect(validate.code, validate.stderr + validate.stdout).toBe(0);
    expect(t.versions()).toEqual({ vault: 0, aws: 0, gcp: 0, azure: 0 });

    const first = await cli(['once', '--json']);
    expect(first.code, first.stderr).toBe(0);
    const rotated = outcomeOf(first);
    expect(rotated.action).toBe('rotate');
    expect(rotated.sinks).toHaveLength(SINKS.length);
    await expectEverywhere(await t.held(), rotated.newId);
    expect(t.markers()).toEqual(ALL_MARKED);
    expect(t.versions()).toEqual({ vault: 1, aws: 1, gcp: 1, azure: 1 });

    const second = await cli(['once', '--json']);
    expect(second.code, second.stderr).toBe(0);
    expect(outcomeOf(second).action).toBe('skip');
    expect(t.versions()).toEqual({ vault: 1, aws: 1, gcp: 1, azure: 1 });
    expect(t.regenerates()).toBe(1);

    // Behind its back: `vault kv put` of another value, an Azure version (with the same tags) that
    // holds something else, and the Kubernetes Secret deleted.
    vault.kv.put({ path: t.names.vault }, { token: 'edited-by-hand' });
    const latest = azure.versions(t.names.azure).at(-1)!;
    azure.plant(t.names.azure, { value: 'edited-by-hand', tags: latest.tags ?? {} });
    k.double.objects.delete('secrets', 'apps', t.names.k8s);

    const status = await cli(['status', '--json']);
    expect(status.code, 'status reports the drift from the sinks').toBe(1);

    const third = await cli(['once', '--json']);
    expect(third.code, third.stderr).toBe(0);
    const healed = outcomeOf(third);
    // Healed with the current secret the state holds: no new token, and only the edited ones written.
    expect(healed.action).toBe('redeliver');
    expect(healed.reason).toContain(`kubernetes-secret apps/${t.names.k8s}`);
    expect(healed.reason).toMatch(new RegExp(`vault http://127\\.0\\.0\\.1:\\d+ secret/${t.names.vault}\\[token\\] holds another secret`));
    expect(healed.reason).toContain(`azure-key-vault myvault.vault.azure.net/secrets/${t.names.azure}`);
    await expectEverywhere(await t.held(), rotated.newId);
    // Vault and Azure had the hand-made version too; AWS and GCP were not touched.
    expect(t.versions()).toEqual({ vault: 3, aws: 1, gcp: 1, azure: 3 });
    expect(t.regenerates()).toBe(1);
  }, 120_000);

  it('a hand edit that drops our marker is drift to repair: the held secret is written again and the marker restored, with no regenerate', async () => {
    const t = await setUp();
    const first = await cli(['once', '--json']);
    expect(first.code, first.stderr).toBe(0);
    const rotated = outcomeOf(first);
    const delivered = (await t.held()).file!;

    // `az keyvault secret set`: a new latest version, without our tags.
    azure.plant(t.names.azure, { value: 'edited-by-hand' });
    // `kubectl delete secret` and `kubectl create secret generic … --from-literal`: no labels.
    await run('kubectl', ['--kubeconfig', k.kubeconfig, 'delete', 'secret', t.names.k8s, '-n', 'apps']);
    await run('kubectl', [
      '--kubeconfig',
      k.kubeconfig,
      'create',
      'secret',
      'generic',
      t.names.k8s,
      '-n',
      'apps',
      `--from-literal=token=${delivered}`,
    ]);
    // `vault kv metadata put -custom-metadata=owner=platform`: replaces all custom metadata.
    vault.kv.setMetadata({ path: t.names.vault }, { customMetadata: { owner: 'platform' } });
    // `aws secretsmanager untag-resource`, through the AWS SDK.
    const restore = setAwsEnvironment(staticCredentialsEnvironment(aws));
    try {
      const sdk = new SecretsManagerClient({ logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {} } });
      await sdk.send(new UntagResourceCommand({ SecretId: t.names.aws, TagKeys: Object.keys(aws.snapshot(t.names.aws)!.tags) }));
      sdk.destroy();
    } finally {
      restore();
    }
    expect(t.markers()).toEqual({
      'kubernetes-secret': undefined,
      vault: undefined,
      aws: undefined,
      gcp: 'token-rotator',
      azure: undefined,
    });

    const repaired = await cli(['once', '--json']);
    expect(repaired.code, repaired.stderr).toBe(0);
    const outcome = itemsOf(repaired.stdout)[0] as { action: string; drift: Array<{ description: string; kind: string }> };
    expect(outcome.action).toBe('redeliver');
    expect(outcome.drift.map((d) => d.kind).sort()).toEqual(['unmarked', 'unmarked', 'unmarked', 'unmarked']);
    expect(repaired.stderr).toMatch(/lost its token-rotator marker.*edited outside token-rotator\?/);
    expect(t.regenerates()).toBe(1);
    await expectEverywhere(await t.held(), rotated.newId);
    expect(t.markers()).toEqual(ALL_MARKED);
    const again = await cli(['once', '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(outcomeOf(again).action).toBe('skip');
  }, 120_000);

  it('a destination never delivered to, without our marker, is still refused: no regenerate, the sink named', async () => {
    const t = await setUp();
    azure.plant(t.names.azure, { value: 'someone-elses' });
    const refused = await cli(['once', '--json']);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/azure-key-vault .*not managed by token-rotator/);
    expect(t.regenerates()).toBe(0);
    expect(azure.versions(t.names.azure).map((v) => v.value)).toEqual(['someone-elses']);
  }, 120_000);

  it('killed between any two sink writes, or after a write before its mark, resumes without a second regenerate or version', async () => {
    const t = await setUp();
    const first = await cli(['once', '--json']);
    expect(first.code, first.stderr).toBe(0);

    const steps = [...SINKS.map((_, i) => `written:${i + 1}`), ...SINKS.slice(0, -1).map((_, i) => `delivered:${i + 1}`)];
    for (const step of steps) {
      const before = { versions: t.versions(), regenerates: t.regenerates() };
      const killed = await cli(['rotate', t.token.name, '--yes', '--json'], { ROTATOR_TEST_FAILPOINT: step });
      expect(killed.signal, `${step}: ${killed.stderr}`).toBe('SIGKILL');

      const resumed = await cli(['once', '--json']);
      expect(resumed.code, `${step}: ${resumed.stderr}`).toBe(0);
      const outcome = outcomeOf(resumed);
      expect(outcome, step).toMatchObject({ action: 'rotate', check: 'resumed' });
      expect(t.regenerates(), step).toBe(before.regenerates + 1);
      expect(t.versions(), step).toEqual({
        vault: before.versions.vault + 1,
        aws: before.versions.aws + 1,
        gcp: before.versions.gcp + 1,
        azure: before.versions.azure + 1,
      });
      await expectEverywhere(await t.held(), outcome.newId);
    }
  }, 300_000);

  it('one secret manager down keeps the secret staged and the others delivered, exit 1; the next run finishes without regenerating', async () => {
    const t = await setUp();
    aws.failNext('PutSecretValue', { type: 'ServiceUnavailable', status: 503 }, { times: 20 });
    aws.failNext('CreateSecret', { type: 'ServiceUnavailable', status: 503 }, { times: 20 });

    const down = await cli(['once', '--json']);
    expect(down.code, down.stderr).toBe(1);
    const held = await t.held();
    expect(held['aws-secrets-manager']).toBeUndefined();
    const delivered = Object.entries(held).filter(([sink]) => sink !== 'aws-secrets-manager');
    expect(new Set(delivered.map(([, value]) => value)).size).toBe(1);
    expect(delivered.every(([, value]) => value !== undefined)).toBe(true);
    expect(t.regenerates()).toBe(1);

    aws.clearFailures();
    const next = await cli(['once', '--json']);
    expect(next.code, next.stderr).toBe(0);
    const outcome = outcomeOf(next);
    expect(outcome).toMatchObject({ action: 'rotate', check: 'resumed' });
    expect(t.regenerates()).toBe(1);
    await expectEverywhere(await t.held(), outcome.newId);
    expect(t.versions()).toEqual({ vault: 1, aws: 1, gcp: 1, azure: 1 });
  }, 120_000);
});

import { describe, expect, it } from 'vitest';

import { stateObjectName } from '../../src/kubernetes/rotator-objects.js';
import { Secret } from '../../src/secret.js';
import { type KubernetesSecretSinkConfig, kubernetesSecretSinkType } from '../../src/sinks/kubernetes-secret/kubernetes-secret-sink.js';
import type { TokenMeta } from '../../src/sinks/sink.js';
import { silentLogger } from '../fakes/fake-deps.js';
import { type CliResult, runCli, writePolicy, writeTokenPolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { secretData, useKubernetesDouble } from '../helpers/kubernetes.js';
import { itemsOf } from '../helpers/output-items.js';

/**
 * The rotator's own objects (issue 20, finding 3): a kubernetes-secret sink naming another token's
 * state Secret was accepted, wrote a plain token into it, rewrote its owner annotation and stranded
 * its staged secret. No sink may name them, and none may write or adopt one, whatever its name.
 */
const DAY = 24 * 3600_000;
const inDays = (d: number) => new Date(Date.now() + d * DAY);

const k = useKubernetesDouble();

/** A Secret labelled as one of the rotator's own (`role`), under any name: a state object copied or relabelled. */
function plantLabelled(namespace: string, name: string, role: string, key: string, value: string) {
  return k.double.objects.put({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name,
      namespace,
      labels: { 'app.kubernetes.io/managed-by': 'token-rotator', 'token-rotator.io/role': role },
      annotations: { 'token-rotator.io/token-name': 'gamma', 'token-rotator.io/token-id': 'tok-1' },
    },
    type: 'Opaque',
    stringData: { [key]: value },
  });
}

describe('a sink naming the state of the rotator', () => {
  const fx = useCliFixture({
    env: () => ({ ...k.env, ROTATOR_STATE_BACKEND: 'kubernetes', ROTATOR_STATE_NAMESPACE: 'token-rotator' }),
  });
  async function cli(...args: string[]): Promise<CliResult> {
    const result = await runCli([...args, '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir });
    fx.results.push(result);
    return result;
  }

  it('is refused by validate and by every run (exit 2, each named, before any network call), in any namespace', async () => {
    const alpha = fx.emulator.store.add({ name: 'alpha', expiresAt: inDays(60) });
    const beta = fx.emulator.store.add({ name: 'beta', expiresAt: inDays(60) });
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [
        { name: 'alpha', id: alpha.id, sinks: [{ type: 'kubernetes-secret', name: 'alpha-token', namespace: 'apps' }] },
        {
          name: 'beta',
          id: beta.id,
          sinks: [
            // alpha's state Secret, where the state lives
            { type: 'kubernetes-secret', name: stateObjectName('alpha'), namespace: 'token-rotator' },
            // a state name in another namespace: another rotator's, or this one's elsewhere
            { type: 'kubernetes-secret', name: 'token-rotator-state-anything', namespace: 'apps' },
            { type: 'kubernetes-secret', name: 'token-rotator-lock-beta-0123456789', namespace: 'apps' },
          ],
        },
      ],
    });
    const before = k.double.requests.length;
    for (const command of ['validate', 'once', 'status', 'plan']) {
      const result = await cli(command);
      expect(result.code, `${command}: ${result.stderr}`).toBe(2);
      for (const index of [0, 1, 2]) {
        expect(result.stderr).toMatch(
          new RegExp(
            `tokens\\[1\\]\\.sinks\\[${index}\\]\\.name: is reserved: token-rotator-(state|lock)-\\* is where token-rotator keeps its own state`,
          ),
        );
      }
      expect(result.stderr).not.toMatch(/^\s+at /m);
    }
    expect(k.double.requests.slice(before)).toEqual([]);
    expect(fx.emulator.requests).toEqual([]);
  });

  it('is refused at write time when a Secret carries the state labels, whatever its name, adopt: true or not', async () => {
    const token = fx.emulator.store.add({ name: 'gamma', expiresAt: inDays(60) });
    // What a state Secret or the journal index looks like, under an innocent name.
    plantLabelled('apps', 'looks-innocent', 'state', 'journal', '{"staged": "the only copy"}');
    plantLabelled('apps', 'also-innocent', 'index', 'journal', '{"staged": "the only copy"}');
    await writeTokenPolicy(fx.dir, 'gamma', token.id, [
      { type: 'kubernetes-secret', name: 'looks-innocent', namespace: 'apps', key: 'journal', adopt: true },
      { type: 'kubernetes-secret', name: 'also-innocent', namespace: 'apps', adopt: true },
    ]);
    const stored = () => [
      k.double.objects.get('secrets', 'apps', 'looks-innocent'),
      k.double.objects.get('secrets', 'apps', 'also-innocent'),
    ];
    const untouched = stored();
    const once = await cli('once', '--json');
    expect(once.code, once.stderr).toBe(1);
    const [outcome] = itemsOf(once.stdout) as Array<{ action: string; drift: Array<{ kind: string; detail: string }> }>;
    expect(outcome!.action).toBe('skip');
    expect(outcome!.drift).toEqual(
      [
        {
          kind: 'unowned',
          detail: expect.stringMatching(/token-rotator's own state object \(label token-rotator\.io\/role=state\).*adopt: true or not/),
        },
        { kind: 'unowned', detail: expect.stringMatching(/token-rotator's own index object/) },
      ].map((d) => expect.objectContaining(d)),
    );
    const rotate = await cli('rotate', 'gamma', '--yes', '--json');
    expect(rotate.code).toBe(1);
    expect(stored()).toEqual(untouched);
    expect(secretData(k.double, 'apps', 'looks-innocent', 'journal')).toBe('{"staged": "the only copy"}');
  });
});

describe('the kubernetes-secret sink client', () => {
  const meta: TokenMeta = { name: 'gamma', id: 'tok-2', expiresAt: null, rotationId: 'rot-1', rotatedAt: new Date() };
  const configOf = (name: string): KubernetesSecretSinkConfig => {
    const parsed = kubernetesSecretSinkType.parse(
      { type: 'kubernetes-secret', name, namespace: 'token-rotator', adopt: true },
      { policyDir: '/', env: k.env },
    );
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    return parsed.config;
  };

  it.each(['state', 'lock'])(
    'neither writes, preflights nor takes metadata from a Secret labelled %s, even with adopt: true',
    async (role) => {
      const name = `renamed-${role}`;
      plantLabelled('token-rotator', name, role, 'token', 'what-it-held');
      const before = k.double.objects.get('secrets', 'token-rotator', name);
      const client = await kubernetesSecretSinkType.open({
        logger: silentLogger(),
        env: k.env,
        reference: () => undefined,
      });
      try {
        const refusal = new RegExp(
          `refusing to write kubernetes-secret token-rotator/${name}\\[token\\]: it is token-rotator's own ${role} object`,
        );
        await expect(client.write(configOf(name), new Secret('s3cret-canary'), meta, {})).rejects.toMatchObject({
          code: 'ERR_SINK',
          message: expect.stringMatching(refusal),
        });
        await expect(client.preflight!(configOf(name), {})).rejects.toMatchObject({
          code: 'ERR_SINK',
          message: expect.stringMatching(refusal),
        });
        const read = await client.read(configOf(name), {});
        expect(read?.unowned).toMatch(/token-rotator's own/);
        expect(read?.meta).toEqual({});
      } finally {
        await client.close?.();
      }
      expect(k.double.objects.get('secrets', 'token-rotator', name)).toEqual(before);
    },
  );
});

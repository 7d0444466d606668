import { describe, expect, it } from 'vitest';

import { type CliResult, runCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';

describe('Kubernetes configuration problems: exit 2, every one named, before any network call', () => {
  const fx = useCliFixture();

  async function cli(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
    const result = await runCli([...args, '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir, env });
    fx.results.push(result);
    return result;
  }

  it('refuses the kubernetes backend without a state key, with a bad namespace, and bad Secret sinks', async () => {
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [
        {
          name: 'a',
          id: 'a1',
          sinks: [
            { type: 'kubernetes-secret', name: 'Not_A_Name', namespace: 'apps', labels: { 'app.kubernetes.io/managed-by': 'me' } },
            { type: 'kubernetes-secret', name: 'ok', key: 'bad key!', namespace: 'apps', format: 'yaml' },
            { type: 'kubernetes-secret', name: 'ok2' },
          ],
          reload: [{ type: 'rollout', name: 'api' }],
        },
      ],
    });
    // No cluster here and no kubeconfig: namespaces must be written.
    const env = {
      HOME: fx.dir,
      KUBECONFIG: `${fx.dir}/no-such-kubeconfig`,
      ROTATOR_STATE_BACKEND: 'kubernetes',
      ROTATOR_STATE_KEY: '',
      ROTATOR_STATE_NAMESPACE: 'Bad_Namespace',
    };
    fx.emulator.requests.length = 0;
    for (const command of ['validate', 'once', 'status']) {
      const result = await cli(env, command);
      expect(result.code, command).toBe(2);
      for (const line of [
        'env.ROTATOR_STATE_NAMESPACE: must be a namespace name',
        'env.ROTATOR_STATE_KEY: required with ROTATOR_STATE_BACKEND=kubernetes',
        'tokens[0].sinks[0].name: must be a Kubernetes object name',
        'tokens[0].sinks[0].labels.app.kubernetes.io/managed-by: is set by token-rotator itself',
        'tokens[0].sinks[1].key: must be a Secret data key',
        'tokens[0].sinks[1].format: must be one of',
        'tokens[0].sinks[2].namespace: required here: not in a cluster, and no kubeconfig context to take it from',
        'tokens[0].reload[0].namespace: required here',
      ]) {
        // status unseals nothing: it reads the state without the key (said under its table).
        if (command === 'status' && line.startsWith('env.ROTATOR_STATE_KEY')) expect(result.stderr, command).not.toContain(line);
        else expect(result.stderr, `${command}: ${line}`).toContain(line);
      }
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
    expect(fx.emulator.requests).toHaveLength(0);
  });

  it('says where the state lives with the kubernetes backend', async () => {
    await writePolicy(fx.dir, { version: 1, tokens: [] });
    const result = await cli({ HOME: fx.dir, ROTATOR_STATE_BACKEND: 'kubernetes', ROTATOR_STATE_NAMESPACE: 'rotator' }, 'validate');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('state kubernetes namespace rotator: Secrets token-rotator-state-*, Leases token-rotator-lock-*');
  });
});

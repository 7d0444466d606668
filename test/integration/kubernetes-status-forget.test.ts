import { expect, it } from 'vitest';

import { stateObjectName } from '../../src/state/backends/kubernetes/state-objects.js';
import { runCli, writePolicy } from '../helpers/cli.js';
import { useKubernetesDouble, useKubernetesStateCli } from '../helpers/kubernetes.js';
import { itemsOf } from '../helpers/output-items.js';
import { stateOnlyEnv } from '../helpers/state-only-env.js';

const DAY = 24 * 3600_000;
const k = useKubernetesDouble();
const fx = useKubernetesStateCli(k, 'on-call');

async function bare(...args: string[]) {
  const result = await runCli([...args, '--config', 'rotation.yaml', '--dotenv', await stateOnlyEnv(fx.dir, fx.envFile)], {
    cwd: fx.dir,
    env: k.env,
  });
  fx.results.push(result);
  return result;
}

it('with the state in Kubernetes, status and state forget need no state key and no service settings; once still requires the key', async () => {
  const token = fx.emulator.store.add({ name: 'ingest', expiresAt: new Date(Date.now() + 2 * DAY) });
  await writePolicy(fx.dir, {
    version: 1,
    tokens: [{ name: 'ingest', id: token.id, sinks: [{ type: 'file', path: 'secrets/ingest.token' }] }],
  });
  const once = await fx.cli('once');
  expect(once.code, once.stderr).toBe(0);
  const stateObject = () => k.double.objects.get('secrets', fx.stateNamespace, stateObjectName('ingest'));
  expect(stateObject()).toBeDefined();

  const status = await bare('status', '--json');
  expect(status.code, status.stderr).toBe(0);
  expect(itemsOf(status.stdout, 'Status')).toEqual([
    expect.objectContaining({ name: 'ingest', health: 'ok', authenticated: false, driftKnown: false }),
  ]);

  const withoutKey = await bare('once');
  expect(withoutKey.code).toBe(2);
  expect(withoutKey.stderr).toContain('env.ROTATOR_STATE_KEY');

  const forgot = await bare('state', 'forget', 'ingest', '--yes');
  expect(forgot.code, forgot.stderr).toBe(0);
  expect(forgot.stdout).toMatch(new RegExp(`^forgot ingest: .*kubernetes namespace ${fx.stateNamespace}`));
  expect(stateObject(), 'the state Secret goes with its record').toBeUndefined();
  const after = await bare('status', '--json');
  expect(itemsOf(after.stdout)).toEqual([expect.objectContaining({ name: 'ingest', health: 'unknown' })]);
});

import type { JsonObject } from 'token-rotator-kubernetes-double';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

import { type CliResult, runCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { type KubernetesHere, kubernetesHere, restartedAt, secretData, seedDeployment } from '../helpers/kubernetes.js';
import { itemsOf } from '../helpers/output-items.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/**
 * The rotator under exactly the Roles `token-rotator rbac` prints for its policy, enforced by the
 * API double as RBAC would (resourceNames included), as the ServiceAccount token-rotator in
 * token-rotator: every command, a drift repair, a crash with a staged secret and its recovery, and
 * a name that left the policy mid-rotation. The state backend never LISTs; the only requests refused
 * are the sinks' optional LISTs, which fall back to reading each Secret by name.
 */
const DAY = 24 * 3600_000;
const inDays = (d: number) => new Date(Date.now() + d * DAY);
const SERVICE_ACCOUNT = 'system:serviceaccount:token-rotator:token-rotator';
const SINK_LISTING = 'app.kubernetes.io/managed-by=token-rotator';

let k: KubernetesHere;
beforeAll(async () => {
  // The kubeconfig's namespace is token-rotator: the state's and the namespace-less sink's, as in the pod.
  k = await kubernetesHere(await makeTempDir(), { user: SERVICE_ACCOUNT });
});
afterAll(async () => {
  await k.double.close();
});

describe('under the least-privilege Roles token-rotator rbac prints', () => {
  const fx = useCliFixture({ env: () => ({ ...k.env, ROTATOR_STATE_BACKEND: 'kubernetes', ROTATOR_LEASE_DURATION: '3s' }) });

  async function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
    const result = await runCli([...args, '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir, env });
    fx.results.push(result);
    return result;
  }
  /** The policy's Roles, as printed, become all the double allows. */
  async function grantPrinted(): Promise<JsonObject[]> {
    const printed = await cli(['rbac']);
    expect(printed.code, printed.stderr).toBe(0);
    const objects = parseAllDocuments(printed.stdout).map((d) => d.toJS() as JsonObject);
    k.double.rbac = objects;
    return objects;
  }
  /** Requests since `from` that were refused, other than the sinks' LISTs (refused by design: they read by name then). */
  const refusedSince = (from: number) =>
    k.double.requests.slice(from).filter((r) => r.status === 403 && !(r.verb === 'list' && r.query.labelSelector === SINK_LISTING));

  const ingest = (id: string) => ({
    name: 'ingest',
    id,
    sinks: [
      { type: 'kubernetes-secret', name: 'ingest-token', namespace: 'apps' },
      { type: 'kubernetes-secret', name: 'ingest-local' }, // the rotator's own namespace
    ],
    reload: [{ type: 'rollout', name: 'ingest-api', namespace: 'apps' }],
  });
  const query = (id: string) => ({ name: 'query', id, sinks: [{ type: 'kubernetes-secret', name: 'query-token', namespace: 'apps' }] });

  it('once, status, plan, rotate, a drift repair, a staged crash and a name that left the policy all work, and the state makes no LIST', async () => {
    seedDeployment(k.double, 'apps', 'ingest-api');
    const ingestToken = fx.emulator.store.add({ name: 'ingest', expiresAt: inDays(2) });
    const queryToken = fx.emulator.store.add({ name: 'query', expiresAt: inDays(60) });
    await writePolicy(fx.dir, { version: 1, tokens: [ingest(ingestToken.id), query(queryToken.id)] });
    const roles = await grantPrinted();
    expect(JSON.stringify(roles)).not.toContain('"list"');
    const start = k.double.requests.length;

    // once: both sinks are new (drift), so both names rotate; the Secrets are created by an apply
    // allowed as create of their names only; the app is restarted.
    const first = await cli(['once', '--json']);
    expect(first.code, first.stderr).toBe(0);
    expect((itemsOf(first.stdout) as Array<{ action: string }>).map((o) => o.action)).toEqual(['rotate', 'rotate']);
    for (const [namespace, name] of [
      ['apps', 'ingest-token'],
      ['token-rotator', 'ingest-local'],
      ['apps', 'query-token'],
    ]) {
      expect(secretData(k.double, namespace!, name!, 'token'), `${namespace}/${name}`).toBeDefined();
    }
    expect(restartedAt(k.double, 'apps', 'ingest-api')).toBeDefined();
    expect(refusedSince(start)).toEqual([]);

    const status = await cli(['status', '--json']);
    expect(status.code, status.stdout + status.stderr).toBe(0);
    expect((itemsOf(status.stdout) as Array<{ health: string }>).map((s) => s.health)).toEqual(['ok', 'ok']);
    const plan = await cli(['plan', '--json']);
    expect(plan.code, plan.stderr).toBe(0);
    const rotated = await cli(['rotate', 'query', '--yes', '--json']);
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(itemsOf(rotated.stdout)[0]).toMatchObject({ action: 'rotate', result: 'ok' });

    // Drift: a deleted Secret is written again (an apply that creates it, by name), no new token.
    const committed = () => fx.emulator.requests.filter((r) => r.op === 'regenerate' && r.committed).length;
    const beforeRepair = committed();
    const held = secretData(k.double, 'apps', 'ingest-token', 'token');
    k.double.objects.delete('secrets', 'apps', 'ingest-token');
    const repaired = await cli(['once', '--json']);
    expect(repaired.code, repaired.stderr).toBe(0);
    expect(itemsOf(repaired.stdout)[0]).toMatchObject({ name: 'ingest', action: 'redeliver' });
    expect(secretData(k.double, 'apps', 'ingest-token', 'token')).toBe(held);
    expect(committed()).toBe(beforeRepair);

    // A crash with the new secret staged in the state Secret: the next run delivers it, no new token.
    const killed = await cli(['rotate', 'ingest', '--yes'], { ROTATOR_TEST_FAILPOINT: 'staged' });
    expect(killed.signal).toBe('SIGKILL');
    const regenerates = committed();
    const recovered = await cli(['once', '--json']);
    expect(recovered.code, recovered.stderr).toBe(0);
    expect(committed()).toBe(regenerates);
    expect(refusedSince(start)).toEqual([]);

    // query is killed mid-rotation, then dropped from the policy, and the Roles printed again without
    // it: its unfinished rotation is still reported (found through the index, read by name), though
    // the new Roles no longer let the rotator read it.
    const killedQuery = await cli(['rotate', 'query', '--yes'], { ROTATOR_TEST_FAILPOINT: 'staged' });
    expect(killedQuery.signal).toBe('SIGKILL');
    const staged = committed();
    await writePolicy(fx.dir, { version: 1, tokens: [ingest(ingestToken.id)] });
    await grantPrinted();
    const stray = await cli(['status', '--json']);
    expect(stray.code).toBe(1);
    expect(itemsOf(stray.stdout)).toContainEqual(
      expect.objectContaining({
        name: 'query',
        pending: [
          expect.stringMatching(
            /unfinished rotation of 'query'.*no longer in the policy\. It cannot be read \(.*is forbidden: User "system:serviceaccount:token-rotator:token-rotator" cannot get.*\); it may hold a new secret/,
          ),
        ],
      }),
    );
    // Put back, with its Roles: the rotation finishes with the staged secret.
    await writePolicy(fx.dir, { version: 1, tokens: [ingest(ingestToken.id), query(queryToken.id)] });
    await grantPrinted();
    const finished = await cli(['once', '--json']);
    expect(finished.code, finished.stderr).toBe(0);
    expect(committed(), 'finished with the staged secret, no new token').toBe(staged);
    const after = await cli(['status', '--json']);
    expect(after.code, after.stdout).toBe(0);

    // The state backend read everything by name: no LIST of Secrets but the sinks' own, none of Leases.
    const lists = k.double.requests.slice(start).filter((r) => r.verb === 'list');
    expect(lists.length).toBeGreaterThan(0);
    for (const list of lists)
      expect(list).toMatchObject({ path: expect.stringMatching(/\/secrets$/), query: { labelSelector: SINK_LISTING } });
  }, 180_000); // a dozen CLI runs in a row: minutes on a loaded machine, seconds on an idle one

  it('is what the double enforces: a Secret the Roles do not name is refused, even to the rotator', async () => {
    const token = fx.emulator.store.add({ name: 'other', expiresAt: inDays(60) });
    // A name of its own: the state namespace is shared with the test before, whose state key differs.
    const other = { ...query(token.id), name: 'other' };
    await writePolicy(fx.dir, { version: 1, tokens: [other] });
    await grantPrinted();
    // A policy that reaches further than its Roles: the sink is refused by the API, not written.
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [{ ...other, sinks: [{ type: 'kubernetes-secret', name: 'not-granted', namespace: 'apps' }] }],
    });
    const refused = await cli(['once', '--json']);
    expect(refused.code, refused.stdout + refused.stderr).toBe(1);
    expect(refused.stdout + refused.stderr).toMatch(/kubernetes-secret apps\/not-granted\[token\].*forbidden/);
    expect(k.double.objects.get('secrets', 'apps', 'not-granted')).toBeUndefined();
  });
});

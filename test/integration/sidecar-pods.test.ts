import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { seedSink, startCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { type KubernetesHere, kubernetesHere } from '../helpers/kubernetes.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const DAY = 24 * 3600_000;
const STATE_KEY = Buffer.alloc(32, 7).toString('base64');

let k: KubernetesHere;
beforeAll(async () => {
  k = await kubernetesHere(await makeTempDir());
  k.double.objects.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'pods-state' } });
});
afterAll(async () => {
  await k.double.close();
});

/**
 * The sidecar shape with any number of replicas: each pod its own `emptyDir` (here a folder of its
 * own) holding the token file at the same path, all sharing the Kubernetes state and its Leases.
 * Pods start, restart and overlap; none of that may cost a regenerate.
 */
describe('sidecar pods sharing Kubernetes state', () => {
  const fx = useCliFixture({
    env: () => ({
      ...k.env,
      ROTATOR_STATE_BACKEND: 'kubernetes',
      ROTATOR_STATE_NAMESPACE: 'pods-state',
      ROTATOR_STATE_KEY: STATE_KEY,
      ROTATOR_LEASE_DURATION: '3s',
    }),
  });

  /** A pod: its own folder with the policy and its own (empty) volume; its daemon checks every second. */
  async function pod(name: string, tokenId: string) {
    const dir = join(fx.dir, name);
    await mkdir(dir);
    await writePolicy(dir, {
      version: 1,
      defaults: { schedule: '* * * * * *' },
      tokens: [{ name: 'ingest', id: tokenId, sinks: [{ type: 'file', path: 'secrets/ingest.token' }] }],
    });
    return dir;
  }
  function daemon(dir: string) {
    const started = startCli(['daemon', '--listen', '127.0.0.1:0', '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: dir });
    let stderr = '';
    started.child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
    const url = async () => {
      await expect.poll(() => /"listen":"(http:[^"]+)"/.exec(stderr)?.[1], { timeout: 30_000, interval: 100 }).toBeDefined();
      return /"listen":"(http:[^"]+)"/.exec(stderr)![1]!;
    };
    return { ...started, url };
  }
  const fileOf = (dir: string) => readFile(join(dir, 'secrets/ingest.token'), 'utf8').catch(() => undefined);
  const regenerates = () => fx.emulator.requests.filter((r) => r.op === 'regenerate');

  it('two pods, then a third started later, all hold the same valid secret with no regenerate; each answers /startupz once its file is there', async () => {
    const token = fx.emulator.store.add({ name: 'ingest', expiresAt: new Date(Date.now() + 20 * DAY) });
    const [a, b, c] = await Promise.all(['pod-a', 'pod-b', 'pod-c'].map((name) => pod(name, token.id)));
    // The first pod's volume already holds the token (the secret the app was deployed with).
    await seedSink(a!, 'secrets/ingest.token', token.secret);

    const daemons = [daemon(a!)];
    const startupz = async (d: (typeof daemons)[number]) => (await fetch(`${await d.url()}/startupz`)).status;
    try {
      // The first pod adopts what its volume holds; the second, started once the first is up (a
      // rolling update), finds the held secret in the state and writes it to its own empty volume.
      await expect.poll(() => startupz(daemons[0]!), { timeout: 60_000, interval: 200 }).toBe(200);
      daemons.push(daemon(b!));
      await expect.poll(() => fileOf(b!), { timeout: 60_000, interval: 200 }).toBe(token.secret);
      await expect.poll(() => startupz(daemons[1]!), { timeout: 30_000, interval: 200 }).toBe(200);
      // Both keep checking every second for a while: nothing is due, and nothing loops.
      const checksBefore = fx.emulator.requests.filter((r) => r.op === 'retrieve').length;
      await expect
        .poll(() => fx.emulator.requests.filter((r) => r.op === 'retrieve').length - checksBefore, { timeout: 60_000, interval: 250 })
        .toBeGreaterThanOrEqual(10);

      // A third pod, started later: its file arrives within its first checks.
      const third = daemon(c!);
      daemons.push(third);
      // Until its file is there it answers 503; its first check may already have written it by the
      // time this asks (it starts checking as soon as it listens), but never answers 200 before.
      const early = await startupz(third);
      if (early === 200) expect(await fileOf(c!)).toBe(token.secret);
      else expect(early).toBe(503);
      await expect.poll(() => fileOf(c!), { timeout: 60_000, interval: 200 }).toBe(token.secret);
      await expect.poll(() => startupz(third), { timeout: 30_000, interval: 200 }).toBe(200);

      // A pod's file deleted (an emptyDir lost with a restart of its container): restored, same secret.
      await seedSink(b!, 'secrets/ingest.token', 'xaat-edited-by-hand-0000');
      await expect.poll(() => fileOf(b!), { timeout: 60_000, interval: 200 }).toBe(token.secret);
    } finally {
      for (const d of daemons) d.child.kill('SIGTERM');
    }
    const results = await Promise.all(daemons.map((d) => d.done));
    fx.results.push(...results);
    expect(results.map((r) => r.code)).toEqual([0, 0, 0]);
    expect(regenerates(), 'no regenerate: nothing was due').toEqual([]);
    for (const dir of [a!, b!, c!]) expect(await fileOf(dir)).toBe(token.secret);
  }, 180_000);

  it('two pods started at once over empty volumes converge on one secret with at most the one regenerate first sight needs', async () => {
    const token = fx.emulator.store.add({ name: 'ingest', expiresAt: new Date(Date.now() + 20 * DAY) });
    const [a, b] = await Promise.all(['pod-a', 'pod-b'].map((name) => pod(name, token.id)));
    const daemons = [daemon(a!), daemon(b!)];
    let first: string | undefined;
    try {
      await expect.poll(async () => (first = await fileOf(a!)), { timeout: 60_000, interval: 200 }).toBeDefined();
      await expect.poll(async () => [await fileOf(a!), await fileOf(b!)], { timeout: 60_000, interval: 200 }).toEqual([first, first]);
      // And they stay so while both check every second.
      const checksBefore = fx.emulator.requests.filter((r) => r.op === 'retrieve').length;
      await expect
        .poll(() => fx.emulator.requests.filter((r) => r.op === 'retrieve').length - checksBefore, { timeout: 60_000, interval: 250 })
        .toBeGreaterThanOrEqual(10);
    } finally {
      for (const d of daemons) d.child.kill('SIGTERM');
    }
    fx.results.push(...(await Promise.all(daemons.map((d) => d.done))));
    expect(regenerates().length, 'first sight with nothing to adopt: one new token, not one per pod or per check').toBeLessThanOrEqual(1);
    expect(await fileOf(a!)).toBe(await fileOf(b!));
    expect(fx.emulator.store.bySecret((await fileOf(a!))!)?.name).toBe('ingest');
  }, 180_000);
});

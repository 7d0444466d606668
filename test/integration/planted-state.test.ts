import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { describe, expect, it } from 'vitest';

import { type CliResult, runCli, writePolicy, writeTokenPolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { journalEntry, putLegacyEntry } from '../helpers/journal-entries.js';
import { secretData, useKubernetesDouble, useKubernetesStateCli } from '../helpers/kubernetes.js';

const DAY = 24 * 3600_000;
const inDays = (d: number) => new Date(Date.now() + d * DAY);
const run = promisify(execFile);
const PLANTED = 'planted-by-someone-else-3f9a1c';

/** A staged entry as someone with write access to the state would plant it: the "new" token is the current one. */
function plantedEntry(name: string, currentId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const now = new Date().toISOString();
  return {
    version: 1,
    name,
    rotationId: 'planted',
    phase: 'staged',
    reason: 'planted',
    startedAt: now,
    oldId: currentId,
    oldExpiresAt: null,
    existingTokenExpiresAt: now,
    newTokenExpiresAt: null,
    delivered: [],
    staged: { newId: currentId, newExpiresAt: null, stagedAt: now, secret: { plain: PLANTED } },
    ...overrides,
  };
}

const k = useKubernetesDouble();

describe('state someone else wrote is refused, and nothing of it is delivered', () => {
  describe('in a Kubernetes state Secret (the key is mandatory there)', () => {
    const fx = useKubernetesStateCli(k, 'planted');
    const cli = fx.cli;
    const kubectl = (...args: string[]) => run('kubectl', ['--kubeconfig', k.kubeconfig, ...args]);
    const stateSecret = (name: string) =>
      k.double.objects
        .list('secrets', fx.stateNamespace)
        .find((s) => (s.metadata as { annotations?: Record<string, string> }).annotations?.['token-rotator.io/token-name'] === name)!;
    const stateText = (name: string, key: string) =>
      Buffer.from((stateSecret(name).data as Record<string, string>)[key]!, 'base64').toString('utf8');
    const plant = (name: string, key: string, text: string) =>
      kubectl(
        'patch',
        'secret',
        (stateSecret(name).metadata as { name: string }).name,
        '-n',
        fx.stateNamespace,
        '--type',
        'merge',
        '-p',
        JSON.stringify({ stringData: { [key]: text } }),
      );
    const regenerates = () => fx.emulator.requests.filter((r) => r.op === 'regenerate').length;

    async function rotatedOnce(name: string) {
      const token = fx.emulator.store.add({ name, expiresAt: inDays(60) });
      await writeTokenPolicy(fx.dir, name, token.id, [
        { type: 'kubernetes-secret', name: `${name}-token`, namespace: 'apps' },
        { type: 'file', path: `secrets/${name}.token` },
      ]);
      const first = await cli('once');
      expect(first.code, first.stderr).toBe(0);
      const record = JSON.parse(stateText(name, 'record')) as { currentId: string; mac?: unknown };
      return { record, delivered: secretData(k.double, 'apps', `${name}-token`, 'token')! };
    }

    it("a staged entry with a plaintext secret naming the current id as new is refused: no sink gets it (the red team's finding 1)", async () => {
      const { record, delivered } = await rotatedOnce('ingest');
      expect(record.mac, 'every record is authenticated when a key is set').toMatchObject({ alg: 'HS256' });
      const before = regenerates();
      await plant('ingest', 'journal', JSON.stringify(plantedEntry('ingest', record.currentId)));

      const refused = await cli('once');
      expect(refused.code).toBe(1);
      expect(refused.stdout + refused.stderr).toMatch(
        /journal entry .* is not authenticated by the state key and holds a plaintext secret/,
      );
      expect(secretData(k.double, 'apps', 'ingest-token', 'token')).toBe(delivered);
      expect(await readFile(join(fx.dir, 'secrets/ingest.token'), 'utf8')).toBe(delivered);
      expect(regenerates()).toBe(before);
      // Left exactly as it was for the operator, and said again by status and plan.
      expect(JSON.parse(stateText('ingest', 'journal'))).toMatchObject({ staged: { secret: { plain: PLANTED } } });
      expect((await cli('status')).stdout).toMatch(/not authenticated/);
      expect((await cli('plan')).stdout).toMatch(/not authenticated/);
    });

    it('an authenticated record changed by hand (another current id) is refused, as is one copied from another name', async () => {
      const { record } = await rotatedOnce('alpha');
      const original = stateText('alpha', 'record');
      const victim = fx.emulator.store.add({ name: 'victim', expiresAt: inDays(60) });
      await plant('alpha', 'record', JSON.stringify({ ...JSON.parse(original), currentId: victim.id }));
      const before = regenerates();
      const changed = await cli('once');
      expect(changed.code).toBe(1);
      expect(changed.stdout + changed.stderr).toMatch(/was changed outside token-rotator: its MAC does not match/);
      expect(regenerates()).toBe(before);

      // The record of another name, MAC and all, does not pass for this one.
      await plant('alpha', 'record', original);
      expect((await cli('once')).code).toBe(0);
      await rotatedOnce('beta');
      await plant('beta', 'record', JSON.stringify({ ...JSON.parse(original), name: 'beta' }));
      const copied = await cli('once');
      expect(copied.code).toBe(1);
      expect(copied.stdout + copied.stderr).toMatch(/state record of "beta".*MAC does not match/);
      expect(record.currentId).toBeDefined();
      expect(regenerates()).toBe(before + 1);
    });
  });

  describe('in state files', () => {
    const fx = useCliFixture();
    async function cli(env: Record<string, string> = {}, ...args: string[]): Promise<CliResult> {
      const result = await runCli([...(args.length ? args : ['once']), '--config', 'rotation.yaml', '--dotenv', fx.envFile], {
        cwd: fx.dir,
        env,
      });
      fx.results.push(result);
      return result;
    }
    const regenerates = () => fx.emulator.requests.filter((r) => r.op === 'regenerate').length;

    async function rotatedOnce(env: Record<string, string> = {}) {
      const token = fx.emulator.store.add({ name: 'ingest', expiresAt: inDays(60) });
      await writePolicy(fx.dir, {
        version: 1,
        tokens: [{ name: 'ingest', id: token.id, sinks: [{ type: 'file', path: 'secrets/ingest.token' }] }],
      });
      const first = await cli(env);
      expect(first.code, first.stderr).toBe(0);
      const record = JSON.parse(await readFile(join(fx.dir, 'state/tokens/ingest.json'), 'utf8')) as {
        currentId: string;
        lineage: Array<{ id: string }>;
      };
      return { record, delivered: await readFile(join(fx.dir, 'secrets/ingest.token'), 'utf8') };
    }
    async function plant(entry: Record<string, unknown>) {
      await mkdir(join(fx.dir, 'state/journal'), { recursive: true });
      await writeFile(join(fx.dir, 'state/journal/ingest.json'), JSON.stringify(entry), { mode: 0o600 });
    }

    it('with a key: an entry without its MAC is refused, and the error says how an operator accepts state that is theirs', async () => {
      const { record, delivered } = await rotatedOnce();
      const before = regenerates();
      await plant(plantedEntry('ingest', record.currentId));
      const refused = await cli();
      expect(refused.code).toBe(1);
      expect(refused.stdout + refused.stderr).toMatch(/ROTATOR_STATE_KEY_PREVIOUS=none/);
      expect(await readFile(join(fx.dir, 'secrets/ingest.token'), 'utf8')).toBe(delivered);
      expect(regenerates()).toBe(before);
    });

    it('an authenticated staged entry written back after later rotations is refused: its token was replaced, its secret is not delivered', async () => {
      const { record } = await rotatedOnce();
      // A rotation stopped once its secret is staged: the entry, MAC and all, is copied aside.
      const stopped = await cli({ ROTATOR_TEST_FAILPOINT: 'staged' }, 'rotate', 'ingest', '--yes', '--reason', 'copied');
      expect(stopped.signal).toBe('SIGKILL');
      const copied = (await journalEntry(join(fx.dir, 'state'), 'ingest'))!;
      expect(copied).toMatchObject({ phase: 'staged', oldId: record.currentId, mac: { alg: 'HS256' } });
      expect((await cli()).code).toBe(0);
      expect((await cli({}, 'rotate', 'ingest', '--yes', '--reason', 'later')).code).toBe(0);
      const current = JSON.parse(await readFile(join(fx.dir, 'state/tokens/ingest.json'), 'utf8')) as { currentId: string };
      const delivered = await readFile(join(fx.dir, 'secrets/ingest.token'), 'utf8');
      const before = regenerates();

      // Written back where an earlier version kept it: a per-name file, which wins over the log.
      await putLegacyEntry(join(fx.dir, 'state'), copied);
      const replayed = await cli();
      expect(replayed.code).toBe(1);
      expect(replayed.stdout + replayed.stderr).toMatch(/already replaced/);
      expect(await readFile(join(fx.dir, 'secrets/ingest.token'), 'utf8')).toBe(delivered);
      expect(JSON.parse(await readFile(join(fx.dir, 'state/tokens/ingest.json'), 'utf8'))).toMatchObject({ currentId: current.currentId });
      expect(regenerates()).toBe(before);
    });

    it('with previous "none": a plaintext staged secret is still refused, while a plaintext record is accepted and said', async () => {
      const { record, delivered } = await rotatedOnce();
      const victim = fx.emulator.store.add({ name: 'victim', expiresAt: inDays(60) });
      const now = new Date().toISOString();
      await plant(
        plantedEntry('ingest', record.currentId, {
          staged: { newId: victim.id, newExpiresAt: null, stagedAt: now, secret: { plain: PLANTED } },
        }),
      );
      const before = regenerates();
      const refused = await cli({ ROTATOR_STATE_KEY_PREVIOUS: 'none' });
      expect(refused.code).toBe(1);
      expect(refused.stdout + refused.stderr).toMatch(/ROTATOR_STATE_KEY_PREVIOUS=none does not accept an unfinished rotation's secret/);
      expect(await readFile(join(fx.dir, 'secrets/ingest.token'), 'utf8')).toBe(delivered);
      expect(JSON.parse(await readFile(join(fx.dir, 'state/tokens/ingest.json'), 'utf8'))).toMatchObject({ currentId: record.currentId });
      expect(regenerates()).toBe(before);

      // A record without its MAC (as written before state authentication) is accepted, with a warning naming it.
      await rm(join(fx.dir, 'state/journal/ingest.json'));
      const file = join(fx.dir, 'state/tokens/ingest.json');
      const { mac: _mac, ...unauthenticated } = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
      await writeFile(file, JSON.stringify(unauthenticated), { mode: 0o600 });
      const accepted = await cli({ ROTATOR_STATE_KEY_PREVIOUS: 'none' });
      expect(accepted.code, accepted.stderr).toBe(0);
      expect(accepted.stderr).toMatch(
        /state record of \\?"ingest\\?" .* is not authenticated by the state key; accepted as ROTATOR_STATE_KEY_PREVIOUS=none says/,
      );
      expect(JSON.parse(await readFile(file, 'utf8'))).toHaveProperty('mac');
      expect((await cli()).code, 'authenticated by that run: no "none" needed any more').toBe(0);
    });

    it('without a key: a staged id equal to its old one, or an old id outside the lineage, is refused', async () => {
      const noKey = { ROTATOR_STATE_KEY: '' };
      const { record, delivered } = await rotatedOnce(noKey);
      const before = regenerates();
      await plant(plantedEntry('ingest', record.currentId));
      const selfReplacing = await cli(noKey);
      expect(selfReplacing.code).toBe(1);
      expect(selfReplacing.stdout + selfReplacing.stderr).toMatch(/replacement of itself/);

      const other = fx.emulator.store.add({ name: 'other team', expiresAt: inDays(60) });
      const fresh = fx.emulator.store.add({ name: 'fresh', expiresAt: inDays(60) });
      await plant(
        plantedEntry('ingest', other.id, {
          staged: { newId: fresh.id, newExpiresAt: null, stagedAt: new Date().toISOString(), secret: { plain: PLANTED } },
        }),
      );
      const outside = await cli(noKey);
      expect(outside.code).toBe(1);
      expect(outside.stdout + outside.stderr).toMatch(/not in this name's lineage/);
      expect(await readFile(join(fx.dir, 'secrets/ingest.token'), 'utf8')).toBe(delivered);
      expect(regenerates()).toBe(before);
    });
  });
});

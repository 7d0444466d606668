import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type CliResult, runCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { journalNames } from '../helpers/journal-entries.js';
import { startRecorder } from '../helpers/recorder.js';

const DAY = 24 * 3600_000;
const inDays = (d: number) => new Date(Date.now() + d * DAY);

/**
 * A service that answers what it should not: the rotator keeps every secret it receives, never
 * follows a credential off its origin, never believes an answer about another token, and never
 * repeats what the service said without masking anything shaped like a token.
 */
describe('a misbehaving token service', () => {
  const fx = useCliFixture({ emulator: { rateLimitPerMinute: 1_000_000 }, env: { ROTATOR_HTTP_TIMEOUT: '3s' } });

  async function cli(...args: string[]): Promise<CliResult> {
    const result = await runCli([...args, '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir });
    fx.results.push(result);
    return result;
  }
  const regenerates = () => fx.emulator.requests.filter((r) => r.op === 'regenerate');
  const sinkFile = (name: string) => join(fx.dir, `secrets/${name}.token`);
  const readState = async (name: string) =>
    JSON.parse(await readFile(join(fx.dir, `state/tokens/${name}.json`), 'utf8')) as Record<string, unknown>;
  const journalFiles = () => journalNames(join(fx.dir, 'state'));

  async function whoami(secret: string) {
    const response = await fetch(`${fx.emulator.apiUrl}/_emulator/whoami`, { headers: { authorization: `Bearer ${secret}` } });
    return response.ok ? ((await response.json()) as { id: string; name: string }) : undefined;
  }

  async function dueToken(name: string) {
    const token = fx.emulator.store.add({ name, expiresAt: inDays(2) });
    await writePolicy(fx.dir, { version: 1, tokens: [{ name, id: token.id, sinks: [{ type: 'file', path: `secrets/${name}.token` }] }] });
    return token;
  }

  describe('regenerate answers that are odd but carry the secret', () => {
    it('an answer without `name` is kept: delivered, committed, regenerated once', async () => {
      await dueToken('nameless');
      fx.emulator.faults.add({ op: 'regenerate', action: { kind: 'answer', patch: { name: null } } });
      const run = await cli('once');
      expect(run.code, run.stderr).toBe(0);
      expect(regenerates()).toHaveLength(1);
      const state = await readState('nameless');
      expect(await whoami(await readFile(sinkFile('nameless'), 'utf8'))).toMatchObject({ id: state.currentId });
    });

    it('a numeric `expiresAt` is odd, logged, and the expiry asked for is assumed', async () => {
      await dueToken('numeric');
      fx.emulator.faults.add({ op: 'regenerate', action: { kind: 'answer', patch: { expiresAt: 1_900_000_000 } } });
      const run = await cli('once');
      expect(run.code, run.stderr).toBe(0);
      expect(regenerates()).toHaveLength(1);
      expect(run.stderr).toMatch(/expiresAt/);
      const sent = regenerates()[0]!.body as { newTokenExpiresAt: string };
      expect((await readState('numeric')).expiresAt).toBe(new Date(sent.newTokenExpiresAt).toISOString());
    });

    it.each([
      ['without an id', { id: null }],
      ['with the id ".."', { id: '..' }],
      ['with an id holding a slash', { id: 'a/../../b' }],
    ])('an answer %s keeps the secret staged, fails, and is never followed by another regenerate', async (_what, patch) => {
      const token = await dueToken('no-id');
      fx.emulator.faults.add({ op: 'regenerate', action: { kind: 'answer', patch } });
      const first = await cli('once');
      expect(first.code).toBe(1);
      expect(first.stdout).toMatch(/failed/);
      expect(regenerates()).toHaveLength(1);
      // The secret is kept (in the journal), delivered nowhere, and no URL was built from the id.
      expect(await journalFiles()).toEqual(['no-id']);
      await expect(readFile(sinkFile('no-id'))).rejects.toThrow(/ENOENT/);
      expect(fx.emulator.requests.every((r) => r.id === token.id)).toBe(true);

      const second = await cli('once');
      expect(second.code).toBe(1);
      expect(regenerates()).toHaveLength(1);
      expect(await journalFiles()).toEqual(['no-id']);
    });
  });

  it('an operator delivers a held secret with rotate --held-id, once the service confirms that id', async () => {
    const token = await dueToken('held');
    fx.emulator.faults.add({ op: 'regenerate', action: { kind: 'answer', patch: { id: '..' } } });
    expect((await cli('once')).code).toBe(1);
    const minted = fx.emulator.store.all().find((t) => t.name === 'held' && t.id !== token.id)!;

    const typo = await cli('rotate', 'held', '--held-id', 'no-such-token', '--yes');
    expect(typo.code).toBe(1);
    expect(await journalFiles()).toEqual(['held']);

    const run = await cli('rotate', 'held', '--held-id', minted.id, '--yes');
    expect(run.code, run.stderr).toBe(0);
    expect(await whoami(await readFile(sinkFile('held'), 'utf8'))).toMatchObject({ id: minted.id });
    expect((await readState('held')).currentId).toBe(minted.id);
    expect(await journalFiles()).toEqual([]);
    expect(regenerates()).toHaveLength(1);
  });

  it('an expiry past year 9999 from retrieve fails the check and writes nothing a later run cannot read', async () => {
    await dueToken('far-future');
    fx.emulator.faults.add({ op: 'retrieve', times: 5, action: { kind: 'answer', patch: { expiresAt: '+020000-01-01T00:00:00Z' } } });
    const first = await cli('once');
    expect(first.code).toBe(1);
    expect(first.stdout).toMatch(/expiresAt "\+020000-01-01T00:00:00Z" is not a date we can use/);
    fx.emulator.faults.clear();
    const second = await cli('once');
    expect(second.code, second.stderr).toBe(0);
  });

  it('an expiry past year 9999 from regenerate keeps the secret with the expiry asked for, in a state that stays readable', async () => {
    await dueToken('far-new');
    fx.emulator.faults.add({ op: 'regenerate', action: { kind: 'answer', patch: { expiresAt: '+020000-01-01T00:00:00Z' } } });
    const run = await cli('once');
    expect(run.code, run.stderr).toBe(0);
    const sent = regenerates()[0]!.body as { newTokenExpiresAt: string };
    expect((await readState('far-new')).expiresAt).toBe(new Date(sent.newTokenExpiresAt).toISOString());
    const status = await cli('status');
    expect(status.code, status.stdout).toBe(0);
  });

  it('a retrieve that answers with another token is refused: nothing is regenerated or delivered', async () => {
    const asked = await dueToken('asked');
    const other = fx.emulator.store.add({ name: 'other', expiresAt: inDays(1) });
    fx.emulator.faults.add({ op: 'retrieve', id: asked.id, times: 5, action: { kind: 'answer', as: other.id } });
    const run = await cli('once');
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(other.id);
    expect(regenerates()).toHaveLength(0);
    await expect(readFile(sinkFile('asked'))).rejects.toThrow(/ENOENT/);
  });

  describe('redirects to another origin', () => {
    let recorder: Awaited<ReturnType<typeof startRecorder>>;
    beforeAll(async () => {
      recorder = await startRecorder();
    });
    afterAll(async () => {
      await recorder.close();
    });

    it('a retrieve redirected elsewhere is not followed: the other origin gets no request, no bearer', async () => {
      const token = await dueToken('redirected');
      recorder.calls.length = 0;
      fx.emulator.faults.add({
        op: 'retrieve',
        times: 10,
        action: { kind: 'redirect', location: `${recorder.url}/v2/tokens/${token.id}` },
      });
      const run = await cli('once');
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(/redirect/i);
      expect(recorder.calls).toEqual([]);
      expect(regenerates()).toHaveLength(0);
    });

    it('a regenerate redirected elsewhere is not followed, is reconciled, and the rotation completes', async () => {
      const token = await dueToken('post-redirected');
      recorder.calls.length = 0;
      fx.emulator.faults.add({
        op: 'regenerate',
        action: { kind: 'redirect', status: 307, location: `${recorder.url}/v2/tokens/${token.id}/regenerate` },
      });
      const run = await cli('once');
      expect(run.code, run.stderr).toBe(0);
      expect(recorder.calls).toEqual([]);
      expect(regenerates().map((r) => r.status)).toEqual([307, 200]);
    });
  });

  it('a 500 that echoes the freshly minted secret never shows it: masked, and the secret is reconciled as lost', async () => {
    await dueToken('echo');
    fx.emulator.faults.add({
      op: 'regenerate',
      action: { kind: 'status', status: 500, commit: true, message: 'internal error while issuing {{secret}}' },
    });
    const run = await cli('once');
    // The answer that carried the secret was an error: an orphan, reported, and the name rotated again.
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/ORPHANED TOKEN/);
    expect(run.stderr).toContain('internal error while issuing [MASKED]');
    // The leak sweep after each test checks every output and state file for every issued secret.
  });

  it('a refusal whose message holds token-shaped text reaches the table and the state masked and truncated', async () => {
    await dueToken('chatty');
    const canaries = [
      'xaat-0f7e3c1a-canary-5d2b-4c11-9a7e-1b2c3d4e5f60',
      'xapt-canary-personal-7d41c0ffee',
      'Zk9Qm2VxR7tLp4WcY8nB3sHd6Jf1Ga5E',
    ];
    fx.emulator.faults.add({
      op: 'regenerate',
      action: { kind: 'status', status: 400, message: `bad request for ${canaries.join(' and ')} ${'detail '.repeat(400)}` },
    });
    const run = await cli('once');
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('bad request for [MASKED] and [MASKED] and [MASKED]');
    const lastFailure = (await readState('chatty')).lastFailure as { message: string };
    expect(lastFailure.message).toContain('[MASKED]');
    expect(lastFailure.message.length).toBeLessThan(700);
    for (const text of [run.stdout, run.stderr, JSON.stringify(lastFailure)]) {
      for (const canary of canaries) expect(text).not.toContain(canary);
    }
  });

  it('a decompression bomb from retrieve is cut off at a bound and named', async () => {
    await dueToken('bomb');
    fx.emulator.faults.add({ op: 'retrieve', times: 5, action: { kind: 'gzip-bomb', bytes: 64 * 1024 * 1024 } });
    const run = await cli('once');
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/larger than/);
    expect(regenerates()).toHaveLength(0);
  });

  it('a decompression bomb answering a regenerate is an unknown outcome: reconciled, reported, rotated again', async () => {
    await dueToken('post-bomb');
    fx.emulator.faults.add({ op: 'regenerate', action: { kind: 'gzip-bomb', bytes: 64 * 1024 * 1024, commit: true } });
    const run = await cli('once');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/ORPHANED TOKEN/);
    expect(regenerates()).toHaveLength(2);
    const state = await readState('post-bomb');
    expect(await whoami(await readFile(sinkFile('post-bomb'), 'utf8'))).toMatchObject({ id: state.currentId });
  });
});

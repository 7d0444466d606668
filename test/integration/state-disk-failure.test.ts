import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { type CliResult, runCli, startCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { itemsOf } from '../helpers/output-items.js';

const DAY = 24 * 3600_000;

/**
 * The state disk fails (turns read-only, fills up) while a regenerate is in flight: the answer is
 * the only copy of the new secret, so it is delivered from memory, and the run itself says what
 * happened. Simulated by putting a file where a state folder was (root ignores permissions; a
 * file in the way stops even root), while the emulator holds the answer.
 */
describe('the state disk fails while a regenerate is in flight', () => {
  const fx = useCliFixture({ emulator: { rateLimitPerMinute: 1_000_000 }, env: { ROTATOR_HTTP_TIMEOUT: '20s' } });
  const args = () => ['once', '--json', '--config', 'rotation.yaml', '--dotenv', fx.envFile];

  async function whoami(secret: string) {
    const response = await fetch(`${fx.emulator.apiUrl}/_emulator/whoami`, { headers: { authorization: `Bearer ${secret}` } });
    return response.ok ? ((await response.json()) as { id: string }) : undefined;
  }

  async function dueToken(name: string) {
    const token = fx.emulator.store.add({ name, expiresAt: new Date(Date.now() + 2 * DAY) });
    await writePolicy(fx.dir, { version: 1, tokens: [{ name, id: token.id, sinks: [{ type: 'file', path: `secrets/${name}.token` }] }] });
    return token;
  }

  /**
   * Breaks the given state folders (and whatever `alsoBreak` breaks) once the service has the
   * regenerate, then lets its answer go: the sinks passed their preflight before it was sent. The
   * service holds the answer for 5 s, a margin a loaded machine needs to break them first.
   */
  async function runWhileBreaking(folders: string[], alsoBreak?: () => Promise<void>): Promise<CliResult> {
    fx.emulator.faults.add({ op: 'regenerate', action: { kind: 'hang', ms: 5_000, commit: true } });
    const { done } = startCli(args(), { cwd: fx.dir });
    await expect.poll(() => fx.emulator.requests.some((r) => r.op === 'regenerate'), { timeout: 60_000, interval: 20 }).toBe(true);
    await alsoBreak?.();
    for (const folder of folders) {
      await mkdir(join(fx.dir, 'state', folder), { recursive: true });
      await rename(join(fx.dir, 'state', folder), join(fx.dir, 'state', `${folder}.aside`));
      await writeFile(join(fx.dir, 'state', folder), 'a file in the way of a folder');
    }
    const result = await done;
    fx.results.push(result);
    return result;
  }

  /** The disk heals: every folder is put back as it was. */
  async function heal(folders: string[]) {
    for (const folder of folders) {
      await rm(join(fx.dir, 'state', folder));
      await rename(join(fx.dir, 'state', `${folder}.aside`), join(fx.dir, 'state', folder));
    }
  }

  const outcomeOf = (result: CliResult) => (itemsOf(result.stdout) as Array<Record<string, unknown>>)[0]!;

  it('the journal fails: the secret is still delivered and committed, the run says so, and the next run finds nothing to redo', async () => {
    await dueToken('journal-lost');
    const run = await runWhileBreaking(['journal']);
    expect(run.code).toBe(1);
    const outcome = outcomeOf(run);
    expect(outcome.error).toMatchObject({ code: 'ERR_STAGING_FAILED', message: expect.stringMatching(/recorded in the state/) });
    const delivered = await readFile(join(fx.dir, 'secrets/journal-lost.token'), 'utf8');
    expect(await whoami(delivered)).toMatchObject({ id: outcome.newId });
    expect(run.stderr).not.toMatch(/ORPHANED TOKEN/);

    // The intent left in the broken journal is recognised as done once the disk heals.
    await heal(['journal']);
    const next = await runCli(args(), { cwd: fx.dir });
    fx.results.push(next);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).not.toMatch(/ORPHANED TOKEN/);
    expect(fx.emulator.requests.filter((r) => r.op === 'regenerate')).toHaveLength(1);
    expect(await readdir(join(fx.dir, 'state/journal'))).toEqual([]);
  });

  it('journal and state fail: the secret is delivered, and the run names the new id to keep', async () => {
    await dueToken('all-lost');
    const run = await runWhileBreaking(['journal', 'tokens']);
    expect(run.code).toBe(1);
    const outcome = outcomeOf(run);
    expect(outcome.error).toMatchObject({ code: 'ERR_STAGING_FAILED' });
    expect((outcome.error as { message: string }).message).toContain(`set \`id: ${JSON.stringify(outcome.newId)}\``);
    const delivered = await readFile(join(fx.dir, 'secrets/all-lost.token'), 'utf8');
    expect(await whoami(delivered)).toMatchObject({ id: outcome.newId });
    await heal(['journal', 'tokens']);
  });

  it('journal and sink fail: the secret cannot be kept, and this run reports the orphan by its id', async () => {
    await dueToken('nowhere');
    const run = await runWhileBreaking(['journal'], () => writeFile(join(fx.dir, 'secrets'), 'a file where the sink folder should be'));
    expect(run.code).toBe(1);
    const outcome = outcomeOf(run);
    expect(run.stderr).toMatch(new RegExp(`ORPHANED TOKEN: .*The orphan is token ${String(outcome.newId)} of 'nowhere'`));
    expect(outcome.orphans).toEqual([expect.objectContaining({ newId: outcome.newId })]);
    await heal(['journal']);
  });
});

import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import type { FaultAction } from 'token-rotator-emulator';
import { describe, expect, it } from 'vitest';

import { type CliResult, emulatorSecrets, runCli, startCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { journalEntry } from '../helpers/journal-entries.js';
import { expectNoLeak } from '../helpers/leaks.js';
import { itemsOf } from '../helpers/output-items.js';

const DAY = 24 * 3600_000;
const inDays = (d: number) => new Date(Date.now() + d * DAY);
const ORPHAN_LINE = /ORPHANED TOKEN/g;

describe('crash-safe rotation', () => {
  const fx = useCliFixture({ emulator: { rateLimitPerMinute: 1_000_000 }, env: { ROTATOR_HTTP_TIMEOUT: '2s' } });

  const args = () => ['--config', 'rotation.yaml', '--dotenv', fx.envFile];
  async function cli(extraEnv: Record<string, string> = {}, ...more: string[]): Promise<CliResult> {
    const result = await runCli(['once', '--json', ...more, ...args()], { cwd: fx.dir, env: extraEnv });
    fx.results.push(result);
    return result;
  }
  const regenerates = (id?: string) => fx.emulator.requests.filter((r) => r.op === 'regenerate' && (id === undefined || r.id === id));
  const sinkPath = (name: string, n = 0) => join(fx.dir, `secrets/${name}-${n}.token`);

  async function policyFor(tokens: Array<{ name: string; id: string }>, extra: Record<string, unknown> = {}, sinksPerToken = 2) {
    await writePolicy(fx.dir, {
      version: 1,
      defaults: extra,
      tokens: tokens.map((t) => ({
        name: t.name,
        id: t.id,
        sinks: Array.from({ length: sinksPerToken }, (_, n) => ({ type: 'file', path: `secrets/${t.name}-${n}.token` })),
      })),
    });
  }

  async function whoami(secret: string) {
    const response = await fetch(`${fx.emulator.apiUrl}/_emulator/whoami`, { headers: { authorization: `Bearer ${secret}` } });
    return response.ok ? ((await response.json()) as { id: string }) : undefined;
  }

  /** The end state the protocol promises: no open journal entry, every sink holds a working secret of the current token. */
  async function expectSettled(names: string[], sinksPerToken = 2) {
    expect(await readdir(join(fx.dir, 'state/journal')).catch(() => [])).toEqual([]);
    for (const name of names) {
      const record = JSON.parse(await readFile(join(fx.dir, `state/tokens/${name}.json`), 'utf8')) as { currentId: string };
      for (let n = 0; n < sinksPerToken; n++) {
        const secret = await readFile(sinkPath(name, n), 'utf8');
        expect(await whoami(secret), `${name} sink ${n} holds a working secret of the current token`).toEqual(
          expect.objectContaining({ id: record.currentId }),
        );
      }
    }
  }

  /** Tokens that live long (past any overlap) and whose secret is in no sink: only orphans may be so. */
  async function unusableLongLivedTokens(names: string[]): Promise<number> {
    const files = await readdir(join(fx.dir, 'secrets')).catch(() => [] as string[]);
    const delivered = new Set(await Promise.all(files.map((f) => readFile(join(fx.dir, 'secrets', f), 'utf8'))));
    const horizon = Date.now() + 2 * 3600_000;
    return fx.emulator.store
      .all()
      .filter((t) => names.includes(t.name) && t.expiresAt && t.expiresAt.getTime() > horizon && !delivered.has(t.secret)).length;
  }

  describe('each outcome of regenerate', () => {
    it.each([400, 403, 404, 409, 422])('a definite %i changes nothing: sent once, journal cleared, exit 1', async (status) => {
      const token = fx.emulator.store.add({ name: `no-${status}`, expiresAt: inDays(1) });
      await policyFor([{ name: `no-${status}`, id: token.id }]);
      fx.emulator.faults.add({ op: 'regenerate', action: { kind: 'status', status } });
      const run = await cli();
      expect(run.code).toBe(1);
      expect(regenerates()).toHaveLength(1);
      expect(fx.emulator.store.get(token.id)!.expiresAt).toEqual(token.expiresAt);
      expect(await readdir(join(fx.dir, 'state/journal')).catch(() => [])).toEqual([]);
      await expect(stat(sinkPath(`no-${status}`))).rejects.toThrow(/ENOENT/);
    });

    it('a 429 waits for X-RateLimit-Reset and is sent again, since the service never commits it', async () => {
      const token = fx.emulator.store.add({ name: 'limited', expiresAt: inDays(1) });
      await policyFor([{ name: 'limited', id: token.id }]);
      fx.emulator.faults.add({
        op: 'regenerate',
        action: {
          kind: 'status',
          status: 429,
          headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 1) },
        },
      });
      const run = await cli();
      expect(run.code, run.stderr).toBe(0);
      expect(regenerates().map((r) => [r.status, r.committed])).toEqual([
        [429, false],
        [200, true],
      ]);
      await expectSettled(['limited']);
    });

    it.each<[string, FaultAction]>([
      ['a 502 the service never acted on', { kind: 'status', status: 502 }],
      ['a reset before the service acted', { kind: 'drop' }],
    ])('after %s, reconcile sees nothing moved and sending again is safe', async (_what, action) => {
      const token = fx.emulator.store.add({ name: 'retry', expiresAt: inDays(1) });
      await policyFor([{ name: 'retry', id: token.id }]);
      fx.emulator.faults.add({ op: 'regenerate', action });
      const run = await cli();
      expect(run.code, run.stderr).toBe(0);
      expect(regenerates().map((r) => r.committed)).toEqual([false, true]);
      expect(run.stderr).toMatch(/did not take effect; sending it again is safe/);
      expect(run.stderr).not.toMatch(ORPHAN_LINE);
      await expectSettled(['retry']);
    });

    it.each<[string, FaultAction]>([
      ['a 500 after the service committed', { kind: 'status', status: 500, commit: true }],
      ['a reset after the service committed', { kind: 'drop', commit: true }],
      ['a 200 without the token field', { kind: 'omit-token' }],
      ['a timeout after the service committed', { kind: 'hang', ms: 3000, commit: true }],
    ])('after %s, the orphan is reported, the name is regenerated again from the old token, and the run exits 1', async (_what, action) => {
      const name = `orphan-${action.kind}`;
      const token = fx.emulator.store.add({ name, expiresAt: inDays(1) });
      await policyFor([{ name, id: token.id }]);
      fx.emulator.faults.add({ op: 'regenerate', action });
      const run = await cli();
      expect(run.code).toBe(1);
      expect(run.stderr.match(ORPHAN_LINE)).toHaveLength(1);
      expect(run.stderr).toMatch(new RegExp(`"oldId":"${token.id}"`));
      const [outcome] = itemsOf(run.stdout) as Array<{ action: string; orphans: unknown[] }>;
      expect(outcome).toMatchObject({ action: 'rotate', orphans: [expect.objectContaining({ oldId: token.id })] });
      // both regenerates went to the old id, which still works in its overlap
      expect(regenerates(token.id).map((r) => r.committed)).toEqual([true, true]);
      await expectSettled([name]);
      expect(await unusableLongLivedTokens([name])).toBe(1);
    });

    it('when the old token no longer works after an orphan, it fails and says what to do', async () => {
      const token = fx.emulator.store.add({ name: 'dead', expiresAt: inDays(1) });
      await policyFor([{ name: 'dead', id: token.id }], { overlap: '0s' });
      fx.emulator.faults.add({ op: 'regenerate', action: { kind: 'status', status: 500, commit: true } });
      const run = await cli();
      expect(run.code).toBe(1);
      expect(run.stderr.match(ORPHAN_LINE)).toHaveLength(1);
      const [outcome] = itemsOf(run.stdout) as Array<{ action: string; error: { code: string; message: string } }>;
      expect(outcome!.error.code).toBe('ERR_ORPHANED_TOKEN');
      expect(outcome!.error.message).toMatch(
        /the old token no longer works: nothing is left to rotate from\. Create a new token for 'dead'/,
      );
      expect(regenerates()).toHaveLength(1);
    });

    it('when reconcile itself cannot reach the service, the intent stays journalled and the next run reconciles first', async () => {
      const token = fx.emulator.store.add({ name: 'later', expiresAt: inDays(1) });
      await policyFor([{ name: 'later', id: token.id }]);
      fx.emulator.faults.add({ op: 'regenerate', action: { kind: 'drop', commit: true } });
      // the check's retrieve goes through; all five tries of reconcile's retrieve fail
      fx.emulator.faults.add({ op: 'retrieve', id: token.id, skip: 1, times: 5, action: { kind: 'status', status: 503 } });
      const first = await cli();
      expect(first.code).toBe(1);
      const entry = await journalEntry(join(fx.dir, 'state'), 'later');
      expect(entry).toMatchObject({ phase: 'intent', oldId: token.id });

      const second = await cli();
      expect(second.code).toBe(1); // an orphan was found
      expect(second.stderr.match(ORPHAN_LINE)).toHaveLength(1);
      expect(regenerates(token.id)).toHaveLength(2);
      await expectSettled(['later']);
    });
  });

  describe('a crash at each step boundary', () => {
    it.each([
      { step: 'intent', regenerated: 1, orphans: 0, exit: 0, note: 'before regenerate was sent: nothing moved, sent once afterwards' },
      {
        step: 'regenerated',
        regenerated: 2,
        orphans: 1,
        exit: 1,
        note: 'after the answer, before it was staged: the one unavoidable orphan, reported',
      },
      { step: 'staged', regenerated: 1, orphans: 0, exit: 0, note: 'after staging: delivered without regenerating' },
      { step: 'written', regenerated: 1, orphans: 0, exit: 0, note: 'a sink has it, the journal does not say so yet: written again' },
      { step: 'delivered', regenerated: 1, orphans: 0, exit: 0, note: 'after the first sink: the second gets the same secret' },
      { step: 'verifying', regenerated: 1, orphans: 0, exit: 0, note: 'every sink has it, not yet verified: verified, then committed' },
      { step: 'committed', regenerated: 1, orphans: 0, exit: 0, note: 'after the commit: the entry is only erased' },
    ])('killed at $step ($note)', async ({ step, regenerated, orphans, exit }) => {
      const token = fx.emulator.store.add({ name: `crash-${step}`, expiresAt: inDays(1) });
      await policyFor([{ name: `crash-${step}`, id: token.id }]);
      const killed = await cli({ ROTATOR_TEST_FAILPOINT: step });
      expect(killed.signal).toBe('SIGKILL');

      const after = await cli();
      expect(after.code, after.stderr).toBe(exit);
      expect(regenerates()).toHaveLength(regenerated);
      expect((killed.stderr + after.stderr).match(ORPHAN_LINE) ?? []).toHaveLength(orphans);
      await expectSettled([`crash-${step}`]);
      expect(await unusableLongLivedTokens([`crash-${step}`])).toBe(orphans);
      // and a third run finds nothing to do
      fx.emulator.requests.length = 0;
      expect((await cli()).code).toBe(0);
      expect(regenerates()).toHaveLength(0);
    });

    it('killed by hand while the service holds its answer: the next run reports the orphan and rotates again', async () => {
      const token = fx.emulator.store.add({ name: 'held', expiresAt: inDays(1) });
      await policyFor([{ name: 'held', id: token.id }]);
      fx.emulator.faults.add({ op: 'regenerate', action: { kind: 'hang', ms: 1500, commit: true } });
      const { child, done } = startCli(['once', ...args()], { cwd: fx.dir });
      while (regenerates().length === 0) await new Promise((r) => setTimeout(r, 20));
      child.kill('SIGKILL');
      fx.results.push(await done);
      const after = await cli();
      expect(after.code).toBe(1);
      expect(after.stderr.match(ORPHAN_LINE)).toHaveLength(1);
      await expectSettled(['held']);
    });
  });

  it('two concurrent runs give exactly one regenerate', async () => {
    const token = fx.emulator.store.add({ name: 'shared', expiresAt: inDays(1) });
    await policyFor([{ name: 'shared', id: token.id }]);
    fx.emulator.faults.add({ op: 'regenerate', action: { kind: 'hang', ms: 600 } });
    const [a, b] = await Promise.all([cli(), cli()]);
    expect([a.code, b.code]).toEqual([0, 0]);
    expect(regenerates()).toHaveLength(1);
    await expectSettled(['shared']);
  });

  it('a damaged journal entry stops that name with the file and what to do, and is left as it was', async () => {
    const damaged = fx.emulator.store.add({ name: 'damaged', expiresAt: inDays(1) });
    const fine = fx.emulator.store.add({ name: 'fine', expiresAt: inDays(1) });
    await policyFor([
      { name: 'damaged', id: damaged.id },
      { name: 'fine', id: fine.id },
    ]);
    const file = join(fx.dir, 'state/journal/damaged.json');
    await rm(join(fx.dir, 'state'), { recursive: true, force: true });
    await writeFile(join(fx.dir, 'placeholder'), '');
    await import('node:fs/promises').then((fs) => fs.mkdir(join(fx.dir, 'state/journal'), { recursive: true }));
    await writeFile(file, '{"version":1,"name":"damaged","phase":"staged","staged":{"newId":"x","sec');
    const run = await cli();
    expect(run.code).toBe(1);
    const outcomes = itemsOf(run.stdout) as Array<{ name: string; action: string; error?: { message: string } }>;
    expect(outcomes.find((o) => o.name === 'damaged')!.error!.message).toMatch(
      new RegExp(`journal entry ${file} is not valid JSON .*may hold the only copy of a new secret`),
    );
    expect(outcomes.find((o) => o.name === 'fine')!.action).toBe('rotate');
    expect(regenerates(damaged.id)).toHaveLength(0);
    expect(await readFile(file, 'utf8')).toBe('{"version":1,"name":"damaged","phase":"staged","staged":{"newId":"x","sec');
  });

  it('a damaged state file stops that name and is left exactly as it was, never replaced by a fresh adoption', async () => {
    const token = fx.emulator.store.add({ name: 'kept', expiresAt: inDays(1) });
    await policyFor([{ name: 'kept', id: token.id }]);
    const file = join(fx.dir, 'state/tokens/kept.json');
    await mkdir(join(fx.dir, 'state/tokens'), { recursive: true });
    await writeFile(file, '{"version":1,"name":"kept","currentId":');
    const run = await cli();
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(new RegExp(`state file ${file} is not valid JSON`));
    expect(await readFile(file, 'utf8')).toBe('{"version":1,"name":"kept","currentId":');
    expect(regenerates()).toHaveLength(0);
  });

  it('a sealed staged secret needs its key: without it nothing is lost, with it the secret is delivered', async () => {
    const token = fx.emulator.store.add({ name: 'sealed', expiresAt: inDays(1) });
    await policyFor([{ name: 'sealed', id: token.id }]);
    const staged = await cli({ ROTATOR_TEST_FAILPOINT: 'staged' });
    expect(staged.signal).toBe('SIGKILL');
    const entry = await journalEntry(join(fx.dir, 'state'), 'sealed');
    expect(entry).toMatchObject({ staged: { secret: { sealed: { alg: 'A256GCM' } } } });

    const wrongKey = await cli({ ROTATOR_STATE_KEY: Buffer.alloc(32, 7).toString('base64') });
    // A configuration error (exit 2), never a reason to rotate.
    expect(wrongKey.code).toBe(2);
    expect(wrongKey.stdout).toMatch(/cannot be opened with ROTATOR_STATE_KEY or ROTATOR_STATE_KEY_PREVIOUS/);
    expect(regenerates()).toHaveLength(1);
    expect(await journalEntry(join(fx.dir, 'state'), 'sealed')).toEqual(entry);

    const rightKey = await cli();
    expect(rightKey.code, rightKey.stderr).toBe(0);
    expect(regenerates()).toHaveLength(1);
    await expectSettled(['sealed']);
  });

  it('without a state key, a staged secret waits in a 0600 file and the run warns about it', async () => {
    await writeFile(fx.envFile, (await readFile(fx.envFile, 'utf8')).replace(/^ROTATOR_STATE_KEY=.*\n/m, ''));
    const token = fx.emulator.store.add({ name: 'plain', expiresAt: inDays(1) });
    await policyFor([{ name: 'plain', id: token.id }]);
    const staged = await runCli(['once', ...args()], { cwd: fx.dir, env: { ROTATOR_TEST_FAILPOINT: 'staged' } });
    expect(staged.stderr).toMatch(
      /ROTATOR_STATE_KEY is not set: the current secret and a new one are kept in plaintext \(file mode 0600\)/,
    );
    expect(await journalEntry(join(fx.dir, 'state'), 'plain')).toMatchObject({ staged: { secret: { plain: expect.any(String) } } });
    expect((await stat(join(fx.dir, 'state/journal/journal.log'))).mode & 0o777).toBe(0o600);
    expect((await stat(join(fx.dir, 'state/journal'))).mode & 0o777).toBe(0o700);
    expectNoLeak({ stdout: staged.stdout, stderr: staged.stderr }, emulatorSecrets(fx.emulator));
    const after = await runCli(['once', ...args()], { cwd: fx.dir });
    expect(after.code, after.stderr).toBe(0);
    expectNoLeak({ stdout: after.stdout, stderr: after.stderr }, emulatorSecrets(fx.emulator));
    await expectSettled(['plain']);
  });

  it('a journal entry whose name left the policy is reported, not forgotten', async () => {
    const token = fx.emulator.store.add({ name: 'leaving', expiresAt: inDays(1) });
    await policyFor([{ name: 'leaving', id: token.id }]);
    await cli({ ROTATOR_TEST_FAILPOINT: 'staged' });
    await policyFor([]);
    const run = await cli();
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /an unfinished rotation of 'leaving' is in .*journal\/journal\.log \(entry for 'leaving'\), but 'leaving' is no longer in the policy/,
    );
    // status and plan say it too, and neither calls it healthy.
    for (const command of ['status', 'plan']) {
      const shown = await runCli([command, ...args()], { cwd: fx.dir });
      fx.results.push(shown);
      expect(shown.code, `${command} exits 1`).toBe(1);
      expect(shown.stdout, command).toMatch(/leaving.*an unfinished rotation of 'leaving' is in .*It holds a new secret/);
    }
  });

  it('a staged entry without its staged part is reported as damaged, with its file, never as a crash', async () => {
    const token = fx.emulator.store.add({ name: 'halfway', expiresAt: inDays(1) });
    await policyFor([{ name: 'halfway', id: token.id }]);
    await mkdir(join(fx.dir, 'state/journal'), { recursive: true });
    const at = new Date().toISOString();
    const entry = {
      version: 1,
      name: 'halfway',
      phase: 'staged',
      reason: 'r',
      startedAt: at,
      oldId: token.id,
      oldExpiresAt: at,
      existingTokenExpiresAt: at,
      newTokenExpiresAt: null,
      delivered: [],
    };
    await writeFile(join(fx.dir, 'state/journal/halfway.json'), JSON.stringify(entry));
    const run = await cli();
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/journal entry .*halfway\.json is damaged \(staged: required\)/);
    expect(run.stdout + run.stderr).not.toMatch(/Cannot read properties/);
    expect(regenerates()).toHaveLength(0);
  });

  it('plan shows an interrupted rotation, and changes nothing', async () => {
    const token = fx.emulator.store.add({ name: 'planned', expiresAt: inDays(1) });
    await policyFor([{ name: 'planned', id: token.id }]);
    await cli({ ROTATOR_TEST_FAILPOINT: 'staged' });
    const plan = await runCli(['plan', '--json', ...args()], { cwd: fx.dir });
    fx.results.push(plan);
    expect(itemsOf(plan.stdout)).toEqual([
      expect.objectContaining({
        name: 'planned',
        action: 'rotate',
        reason: expect.stringMatching(/^an interrupted rotation will be finished first: deliver the staged secret/),
      }),
    ]);
    expect(regenerates()).toHaveLength(1);
  });
});

import { mkdir, readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { type CliResult, runCli, seedSink, startCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { journalEntry } from '../helpers/journal-entries.js';
import { itemsOf } from '../helpers/output-items.js';

const DAY = 24 * 3600_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A rotator stopped (SIGSTOP, or frozen on a full pipe) for longer than a lock's staleness window
 * while a regenerate is in flight. Its lock is never taken over on its own host while it lives; and
 * when it was taken over (from another host), it notices before staging and stops, reporting the
 * token it received by id, without touching what the new holder owns.
 */
describe('a rotator stopped while it holds a name', () => {
  const fx = useCliFixture({ emulator: { rateLimitPerMinute: 1_000_000 }, env: { ROTATOR_HTTP_TIMEOUT: '10s' } });
  const args = () => ['once', '--json', '--config', 'rotation.yaml', '--dotenv', fx.envFile];
  const lockFile = (name: string) => join(fx.dir, 'state/locks', `${name}.lock`);
  const regenerates = () => fx.emulator.requests.filter((r) => r.op === 'regenerate');

  async function cli(): Promise<CliResult> {
    const result = await runCli(args(), { cwd: fx.dir });
    fx.results.push(result);
    return result;
  }

  async function policy(tokens: Array<{ name: string; id: string }>) {
    await writePolicy(fx.dir, {
      version: 1,
      tokens: tokens.map((t) => ({ ...t, sinks: [{ type: 'file', path: `secrets/${t.name}.token` }] })),
    });
  }

  /** Starts a run whose regenerate the service holds, and stops it (SIGSTOP) once the service has it. */
  async function stoppedMidRegenerate(name: string) {
    const token = fx.emulator.store.add({ name, expiresAt: new Date(Date.now() + 2 * DAY) });
    await policy([{ name, id: token.id }]);
    fx.emulator.faults.add({ op: 'regenerate', action: { kind: 'hang', ms: 1500, commit: true } });
    const first = startCli(args(), { cwd: fx.dir });
    for (let i = 0; i < 250 && regenerates().length === 0; i++) await sleep(20);
    expect(regenerates(), 'the regenerate reached the service').toHaveLength(1);
    first.child.kill('SIGSTOP');
    return { token, first };
  }

  it('on its own host, a live but stopped holder keeps the name however old its heartbeat; a due name it holds fails the other run', async () => {
    const { first } = await stoppedMidRegenerate('frozen');
    // Ten minutes without a heartbeat: far past the two-minute window that applies to other hosts.
    const longAgo = new Date(Date.now() - 10 * 60_000);
    await utimes(lockFile('frozen'), longAgo, longAgo);

    const second = await cli();
    expect(second.code).toBe(1);
    const [outcome] = itemsOf(second.stdout) as Array<{ action: string; error: { code: string; message: string } }>;
    expect(outcome).toMatchObject({ result: 'failed', error: { code: 'ERR_LOCKED' } });
    expect(outcome!.error.message).toMatch(new RegExp(`pid ${first.child.pid} on .* holds its lock`));
    expect(regenerates()).toHaveLength(1);

    first.child.kill('SIGCONT');
    const resumed = await first.done;
    fx.results.push(resumed);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(regenerates()).toHaveLength(1);
    expect(resumed.stderr).not.toMatch(/ORPHANED TOKEN/);
  });

  it('a holder whose lock was taken over while it was stopped stops before staging, and reports the token it received', async () => {
    const { first } = await stoppedMidRegenerate('taken');
    // Another host's rotator took the stale lock over (as it may, after two minutes without a heartbeat).
    const owner = { pid: 4242, host: 'another-host', acquiredAt: new Date().toISOString(), nonce: 'f'.repeat(32) };
    await writeFile(lockFile('taken'), JSON.stringify(owner));

    first.child.kill('SIGCONT');
    const resumed = await first.done;
    fx.results.push(resumed);
    expect(resumed.code).toBe(1);
    const [outcome] = itemsOf(resumed.stdout) as Array<{ error: { code: string }; orphans: Array<{ newId?: string }> }>;
    expect(outcome!.error.code).toBe('ERR_LOCK_LOST');
    expect(outcome!.orphans).toEqual([expect.objectContaining({ newId: expect.any(String) })]);
    expect(resumed.stderr).toMatch(/lost the lock on \\"taken\\": pid 4242 on another-host/);
    expect(resumed.stderr).toMatch(new RegExp(`ORPHANED TOKEN: .*token ${outcome!.orphans[0]!.newId} of 'taken'`));

    // Nothing of what the new holder owns was touched: no staged entry, no sink, its lock intact.
    expect(await journalEntry(join(fx.dir, 'state'), 'taken')).toMatchObject({ phase: 'intent' });
    expect(await readdir(join(fx.dir, 'secrets')).catch(() => [])).toEqual([]);
    expect(JSON.parse(await readFile(lockFile('taken'), 'utf8'))).toEqual(owner);
  });

  it('another holder of a name that is not due is no failure', async () => {
    const fine = fx.emulator.store.add({ name: 'fine', expiresAt: new Date(Date.now() + 60 * DAY) });
    await seedSink(fx.dir, 'secrets/fine.token', fine.secret);
    await policy([{ name: 'fine', id: fine.id }]);
    await mkdir(join(fx.dir, 'state/locks'), { recursive: true });
    await writeFile(
      lockFile('fine'),
      JSON.stringify({ pid: 4242, host: 'another-host', acquiredAt: new Date().toISOString(), nonce: 'e'.repeat(32) }),
    );
    const run = await cli();
    expect(run.code, run.stderr).toBe(0);
    expect(itemsOf(run.stdout)).toEqual([expect.objectContaining({ name: 'fine', action: 'skip', check: 'busy' })]);
  });
});

import { EventEmitter } from 'node:events';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';

import { type Emulator, startEmulator } from 'token-rotator-emulator';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { systemClock } from '../../src/clock.js';
import { openRotationDeps } from '../../src/compose/rotation-deps.js';
import { readEnvironment, readSettings } from '../../src/config/env.js';
import { parsePolicy } from '../../src/config/load-policy.js';
import type { Policy } from '../../src/config/types.js';
import { needsAttention } from '../../src/rotation/outcome.js';
import { runOnce } from '../../src/rotation/run-once.js';
import { createShutdown, exitCodeForStop, SAME_STOP_WITHIN_MS, stopOnSignals } from '../../src/rotation/shutdown.js';
import { seedSink, writeEmulatorEnv } from '../helpers/cli.js';
import { expectNoLeak } from '../helpers/leaks.js';
import { captureLog } from '../helpers/rotator-client.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const DAY = 86400_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function until(probe: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !probe(); waited += 20) {
    if (waited > 25_000) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/**
 * A run of `once` asked to stop (SIGTERM from a CronJob's pod eviction, Ctrl-C): what it never
 * started is not attempted, what the stop cut short is interrupted, not failed, and a regenerate
 * already sent is never given up.
 */
describe('a pass stopped gracefully', () => {
  let emulator: Emulator;
  let dir: string;
  beforeAll(async () => {
    emulator = await startEmulator();
  });
  afterAll(async () => {
    await emulator.close();
  });
  beforeEach(async () => {
    dir = await makeTempDir();
    emulator.faults.clear();
    emulator.requests.length = 0;
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function setUp(count: number, expiresInMs: number) {
    const tokens = [];
    for (let i = 0; i < count; i++) {
      const token = emulator.store.add({ name: `t${i}`, expiresAt: new Date(Date.now() + expiresInMs) });
      await seedSink(dir, `t${i}.token`, token.secret);
      tokens.push(token);
    }
    const envFile = await writeEmulatorEnv(emulator, dir);
    const settings = readSettings(readEnvironment({}, { envFile, cwd: dir }), dir);
    const policy: Policy = parsePolicy(
      `version: 1\ntokens:\n${tokens.map((t) => `  - { name: ${t.name}, id: "${t.id}", sinks: [{ type: file, path: ${t.name}.token }] }`).join('\n')}\n`,
      join(dir, 'rotation.yaml'),
    );
    const log = captureLog();
    const opened = await openRotationDeps(settings, log.logger, systemClock);
    return { tokens, policy, log, deps: opened.deps, close: opened.close };
  }

  it('with a hung service: 2 in flight are interrupted at the deadline, the other 4 never start, and nothing counts as a failure', async () => {
    const run = await setUp(6, 60 * DAY);
    // A first pass records every name, as a CronJob's earlier runs would have.
    await runOnce(run.policy, run.deps, { concurrency: 2 });
    emulator.requests.length = 0;
    emulator.faults.add({ op: 'retrieve', times: 100, action: { kind: 'hang', ms: 20_000 } });

    const shutdown = createShutdown();
    const running = runOnce(run.policy, run.deps, { concurrency: 2, signal: shutdown.abort, stopping: shutdown.stopping });
    await until(() => emulator.requests.length === 2, 'two checks to reach the service');
    shutdown.stop('SIGTERM', 100);
    const outcomes = await running;
    shutdown.dispose();
    const records = await Promise.all(run.tokens.map((t) => run.deps.state.read(t.name)));
    await run.close();

    expect(outcomes.map((o) => o.action)).toEqual(Array(6).fill('interrupted'));
    expect(outcomes.filter((o) => /its check was interrupted by the stop/.test(o.reason))).toHaveLength(2);
    expect(outcomes.filter((o) => /not checked: the run was stopped/.test(o.reason))).toHaveLength(4);
    expect(outcomes.some(needsAttention)).toBe(false);
    expect(outcomes.every((o) => o.error === undefined)).toBe(true);
    // the four never started sent nothing
    expect(emulator.requests).toHaveLength(2);

    const log = run.log.lines.join('');
    expect(log).not.toMatch(/rotation failed/);
    expect(log).toMatch(/"msg":"stopped: 4 of 6 tokens not checked"/);
    expect(records.map((r) => [r?.consecutiveFailures, r?.lastFailure])).toEqual(Array(6).fill([0, null]));
  });

  it('a regenerate already sent is never given up at the deadline: its secret is staged, and the next run delivers it', async () => {
    const run = await setUp(1, DAY); // due
    const [token] = run.tokens;
    emulator.faults.add({ op: 'regenerate', id: token!.id, action: { kind: 'hang', ms: 500, commit: true } });

    const shutdown = createShutdown();
    const running = runOnce(run.policy, run.deps, { concurrency: 1, signal: shutdown.abort, stopping: shutdown.stopping });
    await until(() => emulator.requests.some((r) => r.op === 'regenerate'), 'the regenerate to be sent');
    shutdown.stop('SIGTERM', 0); // the deadline passes long before the answer comes
    const [stopped] = await running;
    shutdown.dispose();
    expect(stopped).toMatchObject({ action: 'interrupted', stage: 'rotation', pending: ['file t0.token'] });
    expect(stopped!.reason).toMatch(/the secret stays staged and the next run delivers it without regenerating/);
    expect((await run.deps.journal.read('t0'))?.phase).toBe('staged');

    const [resumed] = await runOnce(run.policy, run.deps, { concurrency: 1 });
    await run.close();
    expect(resumed).toMatchObject({ action: 'rotated', check: 'resumed', newId: stopped!.newId });
    const delivered = (await readFile(join(dir, 't0.token'), 'utf8')).trim();
    expect(emulator.store.bySecret(delivered)?.id).toBe(stopped!.newId);
    expect(emulator.requests.filter((r) => r.op === 'regenerate')).toHaveLength(1);
    expect(run.log.lines.join('')).not.toMatch(/rotation failed|"level":"error"/);
    expectNoLeak(
      { log: run.log.lines.join('') },
      emulator.store.all().map((t) => t.secret),
    );
  });

  it('sends no new regenerate once stopping: a due token whose check was under way is left for the next run', async () => {
    const run = await setUp(1, DAY); // due
    emulator.faults.add({ op: 'retrieve', action: { kind: 'hang', ms: 300 } });

    const shutdown = createShutdown();
    const running = runOnce(run.policy, run.deps, { concurrency: 1, signal: shutdown.abort, stopping: shutdown.stopping });
    await until(() => emulator.requests.length === 1, 'the check to reach the service');
    shutdown.stop('SIGTERM', 10_000); // the check is let finish
    const [stopped] = await running;
    shutdown.dispose();
    const journal = await run.deps.journal.read('t0');
    const record = await run.deps.state.read('t0');
    await run.close();

    expect(stopped).toMatchObject({ action: 'interrupted', stage: 'check' });
    expect(stopped!.reason).toMatch(/^due \(expires in .*\), not rotated: the rotator is stopping; the next run takes it up$/);
    expect(emulator.requests.filter((r) => r.op === 'regenerate')).toEqual([]);
    expect(journal).toBeUndefined();
    expect(record?.consecutiveFailures ?? 0).toBe(0);
    expect(run.log.lines.join('')).not.toMatch(/rotation failed/);
  });

  it('SIGTERM and SIGINT ask for the stop once; a second signal exits at once with 128 + its number', () => {
    const signals = new EventEmitter();
    const exits: number[] = [];
    const shutdown = createShutdown();
    const log = captureLog();
    let now = 0;
    const dispose = stopOnSignals(shutdown, {
      deadlineMs: 1000,
      logger: log.logger,
      signals: signals as never,
      exit: (code) => exits.push(code),
      now: () => now,
    });
    expect(shutdown.stopping.aborted).toBe(false);
    signals.emit('SIGTERM', 'SIGTERM');
    expect(shutdown.stopping.aborted).toBe(true);
    expect(shutdown.abort.aborted).toBe(false);
    expect(exitCodeForStop(shutdown.reason)).toBe(143);
    expect(exits).toEqual([]);
    // Ctrl-C under npm: the same signal again, microseconds later, from npm forwarding it.
    now += 1;
    signals.emit('SIGINT', 'SIGINT');
    expect(exits).toEqual([]);
    now += SAME_STOP_WITHIN_MS;
    signals.emit('SIGINT', 'SIGINT');
    expect(exits).toEqual([130]);
    dispose();
    shutdown.dispose();
    expect(signals.listenerCount('SIGTERM') + signals.listenerCount('SIGINT')).toBe(0);
    expect(log.lines.join('')).toMatch(/second stop signal: exiting now/);
  });

  it('the deadline aborts what still waits, after the time given', async () => {
    const fired: Array<() => void> = [];
    const shutdown = createShutdown({ setTimeout: (callback) => (fired.push(callback), {}), clearTimeout: () => undefined });
    shutdown.stop('SIGINT', 5000);
    expect(shutdown.abort.aborted).toBe(false);
    fired[0]!();
    expect(shutdown.abort.aborted).toBe(true);
    // an abort recognisable as one by clients and sinks
    expect((shutdown.abort.reason as Error).name).toBe('AbortError');
  });
});

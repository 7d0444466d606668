import { rm } from 'node:fs/promises';
import { join } from 'node:path';

import { startEmulator } from 'token-rotator-emulator';
import { afterEach, describe, expect, it } from 'vitest';

import { createTokenServiceClient } from '../../src/api/token-service-client.js';
import { type Clock, systemClock } from '../../src/clock.js';
import { openRotationDeps } from '../../src/compose/rotation-deps.js';
import { readEnvironment, readSettings } from '../../src/config/env.js';
import { parsePolicy } from '../../src/config/load-policy.js';
import { runOnce } from '../../src/rotation/run-once.js';
import { runCli, seedSink, writeEmulatorEnv, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { captureLog, emulatorAuth } from '../helpers/rotator-client.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const DAY = 86400_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const messages = (lines: string[]) => lines.map((l) => JSON.parse(l) as Record<string, unknown> & { msg: string });

describe('progress of a pass, in process', () => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  it('says "N of M tokens checked" with the names still in progress, each time its timer fires, and stops with the pass', async () => {
    const emulator = await startEmulator({ latencyMs: 50 });
    const dir = await makeTempDir();
    cleanup.push(
      () => emulator.close(),
      () => rm(dir, { recursive: true, force: true }),
    );
    const tokens = [0, 1, 2].map((i) => emulator.store.add({ name: `t${i}`, expiresAt: new Date(Date.now() + 60 * DAY) }));
    for (const t of tokens) await seedSink(dir, `${t.name}.token`, t.secret);
    // the second check is held by the service until the test has looked
    emulator.faults.add({ op: 'retrieve', id: tokens[1]!.id, action: { kind: 'hang', ms: 400 } });
    const policy = parsePolicy(
      `version: 1\ntokens:\n${tokens.map((t) => `  - { name: ${t.name}, id: "${t.id}", sinks: [{ type: file, path: ${t.name}.token }] }`).join('\n')}\n`,
      join(dir, 'rotation.yaml'),
    );
    const envFile = await writeEmulatorEnv(emulator, dir);
    const log = captureLog();
    const { deps, close } = await openRotationDeps(readSettings(readEnvironment({}, { envFile, cwd: dir }), dir), log.logger, systemClock);
    cleanup.push(close);

    const timers: Array<{ callback: () => void; ms: number; cleared: boolean }> = [];
    const fake = {
      setTimeout: (callback: () => void, ms: number) => {
        const timer = { callback, ms, cleared: false };
        timers.push(timer);
        return timer;
      },
      clearTimeout: (timer: never) => void ((timer as { cleared: boolean }).cleared = true),
    };
    const running = runOnce(policy, deps, { concurrency: 1, timers: fake });
    while (emulator.requests.length < 2) await sleep(10);
    expect(timers.map((t) => t.ms)).toEqual([2000]); // nothing said before a pass lasts ~2 s
    timers.at(-1)!.callback();
    expect(timers.map((t) => t.ms)).toEqual([2000, 5000]); // then every few seconds
    await running;
    expect(timers.at(-1)!.cleared).toBe(true);

    const progress = messages(log.lines).filter((m) => / of 3 tokens checked$/.test(m.msg));
    expect(progress).toEqual([
      expect.objectContaining({ level: 'info', msg: '1 of 3 tokens checked', done: 1, total: 3, inProgress: ['t1'] }),
    ]);
  });

  it("names the token and the wait when the service's rate limit holds a request back", async () => {
    // The service's clock, 1.5 s before its rate-limit window turns: the wait it asks for is short.
    const now = Date.now();
    const offset = Math.ceil(now / 60_000) * 60_000 + 60_000 - 1500 - now;
    const clock: Clock = { now: () => new Date(Date.now() + offset) };
    const emulator = await startEmulator({ clock, rateLimitPerMinute: 1 });
    cleanup.push(() => emulator.close());
    const token = emulator.store.add({ name: 'limited', expiresAt: null });
    const log = captureLog();
    const api = createTokenServiceClient({
      apiUrl: new URL(emulator.apiUrl),
      auth: emulatorAuth(emulator),
      timeoutMs: 5000,
      clock,
      logger: log.logger,
    });
    await api.retrieve(token.id);
    // The window's one request is used, and its answer said so (X-RateLimit-Remaining: 0): the next
    // is held back until the window turns, not sent to be refused with a 429.
    await api.retrieve(token.id);
    expect(emulator.requests.map((r) => r.status)).toEqual([200, 200]);
    const waits = messages(log.lines).filter((m) => m.msg.startsWith('rate limit of the token service spent'));
    expect(waits).toEqual([
      expect.objectContaining({
        level: 'info',
        op: 'retrieve',
        id: token.id,
        waitMs: expect.any(Number),
        msg: expect.stringMatching(
          new RegExp(
            `^rate limit of the token service spent; holding back \\d+\\.\\d s until its window turns \\(retrieve of token ${token.id}\\)$`,
          ),
        ),
      }),
    ]);
    expect(waits[0]!.waitMs).toBeGreaterThan(0);
  });
});

describe('progress of `once`, as a user sees it', () => {
  const fx = useCliFixture({ emulator: { latencyMs: 900 }, env: { ROTATOR_CONCURRENCY: '1' } });

  it('a pass lasting more than a moment says how far it is, and a rate limit says whom it holds back and for how long', async () => {
    const tokens = [0, 1, 2].map((i) => fx.emulator.store.add({ name: `p${i}`, expiresAt: new Date(Date.now() + 60 * DAY) }));
    for (const t of tokens) await seedSink(fx.dir, `${t.name}.token`, t.secret);
    await writePolicy(fx.dir, {
      version: 1,
      tokens: tokens.map((t) => ({ name: t.name, id: t.id, sinks: [{ type: 'file', path: `${t.name}.token` }] })),
    });
    fx.emulator.faults.add({ op: 'retrieve', id: tokens[2]!.id, action: { kind: 'status', status: 429, headers: { 'retry-after': '1' } } });
    const result = await runCli(['once', '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir });
    fx.results.push(result);
    expect(result.code).toBe(0);
    const logged = messages(result.stderr.split('\n').filter((l) => l.startsWith('{')));
    expect(logged.filter((m) => / of 3 tokens checked$/.test(m.msg))).not.toEqual([]);
    for (const line of logged.filter((m) => / of 3 tokens checked$/.test(m.msg)))
      expect(line).toMatchObject({ total: 3, done: expect.any(Number) });
    expect(logged).toContainEqual(
      expect.objectContaining({
        msg: `rate limited by the token service; trying again in 1.0 s (retrieve of token ${tokens[2]!.id})`,
        waitMs: 1000,
      }),
    );
  }, 30_000);
});

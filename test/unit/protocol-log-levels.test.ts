import { describe, expect, it } from 'vitest';

import { ApiError } from '../../src/errors.js';
import { rotateToken } from '../../src/rotation/rotate-token.js';
import { mustHold } from '../fakes/expectations.js';
import { openWorld, type World } from '../fakes/fake-deps.js';

/*
 * Error lines are what an operator is paged for: a name's own failure. A stop (its deadline giving
 * up what was waiting) and a failure every name shares (said once by the command) are not; what a
 * stop left staged is still said, as a warning.
 */

interface Line {
  level: string;
  tokenName?: string;
  step?: string;
  sink?: string;
  msg: string;
}
const WARN = 'warn';
const linesOf = (world: World): Line[] => world.logs.lines.map((l) => JSON.parse(l) as Line);
const errorsOf = (world: World) => linesOf(world).filter((l) => l.level === 'error' || l.level === 'fatal');

describe('what a rotation logs as an error', () => {
  it("a name's own failure: an error line, naming the token", async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    world.service.onRegenerate({ kind: 'refuse', status: 403 });
    expect(await rotateToken(policy, world.process(), { lockWaitMs: 0 })).toMatchObject({ action: 'failed' });
    expect(errorsOf(world)).not.toEqual([]);
    expect(errorsOf(world).every((l) => l.tokenName === 'ingest')).toBe(true);
  });

  it('a failure of the token service every name shares: a warning per name, never an error line', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    const down = new ApiError('cannot reach the token service at https://api.example: connection refused (injected)', {
      op: 'retrieve',
      dependencyFailure: {
        dependency: 'token service',
        kind: 'connection-refused',
        target: 'https://api.example',
        check: 'check that the service is up',
      },
    });
    const api = { retrieve: async () => Promise.reject(down), regenerate: async () => Promise.reject(down) };
    const outcome = await rotateToken(policy, world.process({ api }), { lockWaitMs: 0 });
    expect(outcome).toMatchObject({ action: 'failed', stage: 'check', error: { code: 'ERR_API' } });
    expect(errorsOf(world)).toEqual([]);
    expect(linesOf(world).some((l) => l.level === WARN && l.tokenName === 'ingest')).toBe(true);
  });

  it("a delivery that failed: an error line for that sink; one the stop's deadline gave up: a warning, no error", async () => {
    const failing = openWorld();
    const one = failing.token('ingest');
    failing.destinations.failWrites('ingest-b');
    await rotateToken(one.policy, failing.process(), { lockWaitMs: 0 });
    expect(errorsOf(failing).some((l) => l.step === 'delivered' && l.sink === 'memory ingest-b')).toBe(true);

    const stopped = openWorld();
    const two = stopped.token('ingest');
    const deadline = new AbortController();
    stopped.destinations.duringWrite('ingest-a', () => deadline.abort());
    expect(await rotateToken(two.policy, stopped.process(), { lockWaitMs: 0, signal: deadline.signal })).toMatchObject({
      action: 'interrupted',
    });
    expect(errorsOf(stopped)).toEqual([]);
    expect(linesOf(stopped).some((l) => l.level === WARN && l.step === 'delivered' && l.sink === 'memory ingest-b')).toBe(true);
  });

  it("a redelivery that failed: an error line; one the stop's deadline gave up: no error", async () => {
    for (const stop of [false, true]) {
      const world = openWorld();
      const { policy } = world.token('ingest', { settings: { onDrift: 'redeliver' } });
      await rotateToken(policy, world.process(), { lockWaitMs: 0 });
      world.destinations.lose('ingest-a');
      world.destinations.lose('ingest-b');
      const deadline = new AbortController();
      if (stop) world.destinations.duringWrite('ingest-a', () => deadline.abort());
      else world.destinations.failWrites('ingest-b');
      const outcome = await rotateToken(policy, world.process(), { lockWaitMs: 0, signal: deadline.signal });
      expect(outcome.action).toBe(stop ? 'interrupted' : 'failed');
      expect(
        errorsOf(world).some((l) => l.step === 'redelivered'),
        `stop: ${stop}`,
      ).toBe(!stop);
    }
  });

  it("a name another process holds, found once the stop's deadline passed: no error line", async () => {
    for (const stop of [false, true]) {
      const world = openWorld();
      const { policy } = world.token('ingest');
      await mustHold(world.storage.open().locks.acquire('ingest', { waitMs: 0 }));
      const deadline = new AbortController();
      if (stop) deadline.abort();
      const outcome = await rotateToken(policy, world.process(), { lockWaitMs: 0, signal: deadline.signal });
      expect(outcome.action).toBe(stop ? 'interrupted' : 'failed');
      expect(errorsOf(world).length > 0, `stop: ${stop}`).toBe(!stop);
    }
  });

  it("a check the stop's deadline gave up: no error line", async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    const deadline = new AbortController();
    const api = {
      retrieve: async (id: string, options?: { signal?: AbortSignal }) => {
        deadline.abort();
        options?.signal?.throwIfAborted();
        return world.service.retrieve(id);
      },
      regenerate: world.service.regenerate.bind(world.service),
    };
    const outcome = await rotateToken(policy, world.process({ api }), { lockWaitMs: 0, signal: deadline.signal });
    expect(outcome).toMatchObject({ action: 'interrupted', reason: expect.stringMatching(/check/) });
    expect(world.service.regenerates, 'nothing sent once the check was given up').toEqual([]);
    expect(errorsOf(world)).toEqual([]);
  });
});

describe('every line a rotation logs', () => {
  it('names its token', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    world.destinations.failWrites('ingest-b');
    await rotateToken(policy, world.process(), { lockWaitMs: 0 });
    const lines = linesOf(world);
    expect(lines.length).toBeGreaterThan(3);
    expect(lines.filter((l) => l.tokenName !== 'ingest')).toEqual([]);
  });
});

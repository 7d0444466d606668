import { describe, expect, it } from 'vitest';

import { SinkError } from '../../src/errors.js';
import { rotateToken } from '../../src/rotation/rotate-token.js';
import type { SinkConfig } from '../../src/sinks/registry.js';
import type { SinkSet } from '../../src/sinks/sink-set.js';
import { expectSettled } from '../fakes/expectations.js';
import { openWorld, type World } from '../fakes/fake-deps.js';
import type { MemorySinkConfig } from '../fakes/memory-sink.js';

/** The world's sinks, where the preflight of the keys in `refusing` finds a problem (and `aborting` is given up). */
function preflighting(world: World, refusing: Record<string, string>, asked: string[] = []): SinkSet<SinkConfig> {
  const sinks = world.destinations.open(world.logs.logger);
  return {
    ...sinks,
    preflight: async (config, options) => {
      const { key } = config as unknown as MemorySinkConfig;
      asked.push(key);
      if (key in refusing) throw new SinkError(`cannot write memory ${key}: ${refusing[key]}`);
      return sinks.preflight(config, options);
    },
  };
}

describe('step 2: every sink proves it can take the new secret before anything is regenerated', () => {
  it('a sink that cannot take it stops the rotation: no regenerate, no sink written, the old token untouched', async () => {
    const world = openWorld();
    const { policy, id } = world.token('ingest');
    const expiresAt = world.service.token(id)!.expiresAt;
    const asked: string[] = [];
    const run = world.process({ sinks: preflighting(world, { 'ingest-b': 'read-only file system (injected)' }, asked) });

    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    expect(outcome).toMatchObject({
      action: 'failed',
      stage: 'check',
      oldId: id,
      error: {
        code: 'ERR_SINK',
        message: expect.stringMatching(/not rotated, the old token is untouched.*cannot write memory ingest-b: read-only file system/),
      },
    });
    expect(outcome.error!.message, 'the sink that can take it is not named').not.toMatch(/ingest-a/);
    expect(asked.sort(), 'every sink was asked').toEqual(['ingest-a', 'ingest-b']);
    expect(world.service.regenerates).toEqual([]);
    expect(world.destinations.writes).toEqual([]);
    expect(world.service.token(id)!.expiresAt).toEqual(expiresAt);
    expect(await run.journal.read('ingest')).toBeUndefined();
    expect(await run.state.read('ingest')).toMatchObject({ currentId: id, consecutiveFailures: 1, lastFailure: { code: 'ERR_SINK' } });
  });

  it('every sink that cannot take it is named, not only the first', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    const run = world.process({
      sinks: preflighting(world, { 'ingest-a': 'quota exceeded (injected)', 'ingest-b': 'forbidden (injected)' }),
    });
    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    expect(outcome.error?.message).toMatch(/cannot write memory ingest-a: quota exceeded.*; cannot write memory ingest-b: forbidden/);
    expect(world.service.regenerates).toEqual([]);
  });

  it("a sink holding another token's secret cannot take it either, even though it passes its own preflight", async () => {
    const world = openWorld();
    const { policy, id } = world.token('ingest');
    world.destinations.put('ingest-b', 'xaat-the-other-tokens-secret', { name: 'billing' });
    const run = world.process();

    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    expect(outcome).toMatchObject({
      action: 'failed',
      oldId: id,
      error: { code: 'ERR_SINK', message: expect.stringMatching(/memory ingest-b: its metadata names another token, "billing"/) },
    });
    expect(world.service.regenerates).toEqual([]);
    expect(world.destinations.secret('ingest-b'), "the other token's secret is left alone").toBe('xaat-the-other-tokens-secret');
    expect(world.destinations.writes).toEqual([]);
  });

  it('a sink whose check throws nothing usable (not even an Error) still stops the rotation as a sink problem', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    const sinks = world.destinations.open(world.logs.logger);
    // A sink plugin that rejects with undefined.
    const run = world.process({ sinks: { ...sinks, preflight: async () => Promise.reject(undefined) } });
    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    expect(outcome).toMatchObject({ action: 'failed', stage: 'check', error: { code: 'ERR_SINK' } });
    expect(world.service.regenerates).toEqual([]);
  });

  it('once every sink can take it, the rotation goes on', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    const asked: string[] = [];
    const run = world.process({ sinks: preflighting(world, {}, asked) });
    expect(await rotateToken(policy, run, { lockWaitMs: 0 })).toMatchObject({ action: 'rotated' });
    expect(asked.sort()).toEqual(['ingest-a', 'ingest-b']);
    await expectSettled(world, run.view, policy);
  });

  it("a preflight given up at the stop's deadline is the stop's doing: interrupted, nothing regenerated, no failure counted", async () => {
    const world = openWorld();
    const { policy, id } = world.token('ingest');
    const deadline = new AbortController();
    const sinks = world.destinations.open(world.logs.logger);
    const run = world.process({
      sinks: {
        ...sinks,
        // The deadline comes while the sink checks; a preflight given the run's signal gives up.
        preflight: async (_config, options) => {
          deadline.abort();
          options.signal?.throwIfAborted();
          return 'checked';
        },
      },
    });

    const outcome = await rotateToken(policy, run, { lockWaitMs: 0, signal: deadline.signal });
    expect(outcome).toMatchObject({ action: 'interrupted', oldId: id });
    expect(world.service.regenerates).toEqual([]);
    expect(await run.state.read('ingest')).toBeUndefined();
    const errors = world.logs.lines.filter((line) => (JSON.parse(line) as { level: string }).level === 'error');
    expect(errors, 'a stop is not a sink that cannot take the secret').toEqual([]);
  });
});

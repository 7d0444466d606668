import { describe, expect, it } from 'vitest';

import { rotatedToken } from '../../src/reload/run-reloads.js';
import { rotateToken } from '../../src/rotation/rotate-token.js';
import type { SinkConfig } from '../../src/sinks/registry.js';
import type { SinkSet } from '../../src/sinks/sink-set.js';
import { expectSettled, mustHold } from '../fakes/expectations.js';
import { openWorld, testPolicy, type World } from '../fakes/fake-deps.js';
import type { MemorySinkConfig } from '../fakes/memory-sink.js';

/** A name rotated once and settled, with onDrift: redeliver; its new token is not due for weeks. */
async function settled() {
  const world = openWorld();
  const { policy } = world.token('ingest', { settings: { onDrift: 'redeliver' } });
  expect(await rotateToken(policy, world.process(), { lockWaitMs: 0 })).toMatchObject({ action: 'rotated' });
  const current = world.service.committed()[0]!.newId!;
  return { world, policy, current, secret: world.service.token(current)!.secret };
}

describe('redelivery of the current secret to the sinks that lack it', () => {
  it('gives each sink the metadata of the rotation that made the secret, records it as delivered, and regenerates nothing', async () => {
    const { world, policy, current, secret } = await settled();
    const meta = world.destinations.content('ingest-a')!.meta;
    const before = (await world.storage.open().state.read('ingest'))!;
    world.destinations.lose('ingest-b');
    world.clock.advance(3_600_000);
    const run = world.process();

    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    expect(outcome).toMatchObject({ action: 'redelivered', oldId: current, sinks: [{ sink: 'memory ingest-b', result: 'created' }] });
    expect(outcome.sinks[0]).not.toHaveProperty('markerOnly');
    expect(world.destinations.content('ingest-b')).toEqual({ secret, meta });
    expect(rotatedToken(outcome), 'its consumers reload: the sink held nothing').toMatchObject({ id: current });
    const record = await expectSettled(world, run.view, policy, current);
    expect(record.sinks!['memory:ingest-b']).toMatchObject({ how: 'delivered', at: world.clock.now().toISOString() });
    expect(record.sinks!['memory:ingest-a'], 'the sink that had it keeps its record').toEqual(before.sinks!['memory:ingest-a']);
    expect(record.sinks!['memory:ingest-b']).not.toEqual(before.sinks!['memory:ingest-b']);
    expect(world.service.regenerates).toHaveLength(1);
  });

  it('a sink that refuses it fails the check (ERR_SINK, naming it); the one that took it is recorded, nothing regenerated', async () => {
    const { world, policy, current, secret } = await settled();
    world.destinations.lose('ingest-a');
    world.destinations.lose('ingest-b');
    world.destinations.failWrites('ingest-a', 'permission denied (injected)');
    const run = world.process();

    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    expect(outcome).toMatchObject({
      action: 'failed',
      stage: 'check',
      oldId: current,
      sinks: [
        { sink: 'memory ingest-a', result: 'failed', error: 'cannot write memory ingest-a: permission denied (injected)' },
        { sink: 'memory ingest-b', result: 'created' },
      ],
      error: {
        code: 'ERR_SINK',
        message: expect.stringMatching(/memory ingest-a: cannot write memory ingest-a: permission denied \(injected\)$/),
      },
    });
    expect(outcome.error!.message).not.toMatch(/memory ingest-b/);
    expect(world.destinations.secret('ingest-b')).toBe(secret);
    const record = await run.state.read('ingest');
    expect(record?.sinks?.['memory:ingest-b']).toMatchObject({ how: 'delivered' });
    expect(record, 'the failure is counted').toMatchObject({ currentId: current, consecutiveFailures: 1 });
    expect(world.service.regenerates).toHaveLength(1);

    world.destinations.heal('ingest-a');
    const next = world.process();
    expect(await rotateToken(policy, next, { lockWaitMs: 0 })).toMatchObject({
      action: 'redelivered',
      sinks: [{ sink: 'memory ingest-a', result: 'created' }],
    });
    await expectSettled(world, next.view, policy, current);
  });

  it('every sink that refuses it is named, with its own error', async () => {
    const { world, policy } = await settled();
    world.destinations.lose('ingest-a');
    world.destinations.lose('ingest-b');
    world.destinations.failWrites('ingest-a', 'quota exceeded (injected)');
    world.destinations.failWrites('ingest-b', 'forbidden (injected)');
    const outcome = await rotateToken(policy, world.process(), { lockWaitMs: 0 });
    expect(outcome).toMatchObject({ action: 'failed', stage: 'check', error: { code: 'ERR_SINK' } });
    expect(outcome.error!.message).toContain('memory ingest-a, memory ingest-b');
    expect(outcome.error!.message).toContain('quota exceeded (injected); cannot write memory ingest-b: forbidden (injected)');
  });

  it('a process that loses its lock while redelivering writes no further sink and leaves the state alone', async () => {
    const { world, policy, current } = await settled();
    world.destinations.lose('ingest-a');
    world.destinations.lose('ingest-b');
    const stopped = world.process();
    const taker = world.storage.open();
    const before = world.storage.readRaw('state', 'ingest');
    const writes = world.destinations.writes.length;
    world.destinations.duringWrite('ingest-a', async () => {
      world.storage.crash(stopped.view);
      await mustHold(taker.locks.acquire('ingest', { waitMs: 0 }));
    });

    const outcome = await rotateToken(policy, stopped, { lockWaitMs: 0 });
    expect(outcome).toMatchObject({ action: 'failed', oldId: current, error: { code: 'ERR_LOCK_LOST' } });
    expect(world.destinations.writes.slice(writes), 'only the write in flight landed').toEqual([{ key: 'ingest-a', result: 'created' }]);
    expect(world.storage.readRaw('state', 'ingest')).toBe(before);
    const blamed = world.logs.lines
      .map((l) => JSON.parse(l) as { level: string; step?: string })
      .filter((l) => l.step === 'redelivered' && l.level === 'error');
    expect(blamed, 'no sink is blamed for the lost lock').toEqual([]);
  });

  it("the stop's deadline, reached while redelivering, gives up the sinks not written yet: interrupted, no failure counted", async () => {
    const { world, policy } = await settled();
    world.destinations.lose('ingest-a');
    world.destinations.lose('ingest-b');
    const deadline = new AbortController();
    world.destinations.duringWrite('ingest-a', () => deadline.abort());
    const writes = world.destinations.writes.length;
    const run = world.process();

    const outcome = await rotateToken(policy, run, { lockWaitMs: 0, signal: deadline.signal });
    expect(outcome).toMatchObject({ action: 'interrupted' });
    expect(world.destinations.writes.slice(writes), 'ingest-b given up, never written').toEqual([{ key: 'ingest-a', result: 'created' }]);
    expect(await run.state.read('ingest')).toMatchObject({ consecutiveFailures: 0 });
  });

  it("the stop's deadline reached once every sink is written changes nothing: redelivered", async () => {
    const { world, policy, current } = await settled();
    world.destinations.lose('ingest-b');
    const deadline = new AbortController();
    world.destinations.duringWrite('ingest-b', () => deadline.abort());
    const outcome = await rotateToken(policy, world.process(), { lockWaitMs: 0, signal: deadline.signal });
    expect(outcome).toMatchObject({ action: 'redelivered', sinks: [{ sink: 'memory ingest-b', result: 'created' }] });
    await expectSettled(world, world.process().view, policy, current);
  });
});

/**
 * Sinks whose destinations have an ownership marker (`adopt: false` in their config): reading one
 * in `markerGone` shows another writer's content, unless read as claimed by the state's record.
 */
function markedSinks(world: World, markerGone: Set<string>): SinkSet<SinkConfig> {
  const sinks = world.destinations.open(world.logs.logger);
  return {
    ...sinks,
    read: async (config, options) => {
      const content = await sinks.read(config, options);
      const { key, adopt } = config as unknown as MemorySinkConfig & { adopt: boolean };
      return content && markerGone.has(key) && adopt !== true ? { ...content, unowned: 'it carries no token-rotator label' } : content;
    },
  };
}

const markedSink = (key: string) => ({ type: 'memory', key, adopt: false }) as unknown as SinkConfig;

describe('a sink that lost only its ownership marker, and still holds the current secret', () => {
  it('is written again to restore the marker, marked as such, so no consumer is reloaded for it', async () => {
    const world = openWorld();
    const markerGone = new Set<string>();
    const sinks = () => world.process({ sinks: markedSinks(world, markerGone) });
    const token = world.token('ingest', { settings: { onDrift: 'rotate' } });
    const policy = testPolicy({
      name: 'ingest',
      id: token.id,
      sinks: [markedSink('ingest-a'), markedSink('ingest-b')],
      settings: { onDrift: 'rotate' },
    });
    expect(await rotateToken(policy, sinks(), { lockWaitMs: 0 })).toMatchObject({ action: 'rotated' });
    const current = world.service.committed()[0]!.newId!;
    const secret = world.service.token(current)!.secret;
    // Edited by hand: the label and the metadata are gone, the secret is the same.
    world.destinations.put('ingest-b', secret);
    markerGone.add('ingest-b');

    const run = sinks();
    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    expect(outcome).toMatchObject({
      action: 'redelivered',
      drift: [{ sink: 'memory ingest-b', kind: 'unmarked', holdsCurrent: true }],
      sinks: [{ sink: 'memory ingest-b', result: 'updated', markerOnly: true }],
    });
    expect(rotatedToken(outcome), 'nothing to reload: every consumer already has this secret').toBeUndefined();
    expect(world.service.regenerates, 'never rotated for a lost marker').toHaveLength(1);
    expect(world.destinations.content('ingest-b')).toEqual(world.destinations.content('ingest-a'));
  });
});

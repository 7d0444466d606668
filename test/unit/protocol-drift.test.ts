import { describe, expect, it } from 'vitest';

import { needsAttention } from '../../src/rotation/outcome.js';
import { rotateToken } from '../../src/rotation/rotate-token.js';
import { expectSettled, named } from '../fakes/expectations.js';
import { DAY, openWorld } from '../fakes/fake-deps.js';
import { MemoryStateStorage } from '../fakes/memory-state-backend.js';

/** A name rotated once, settled: both sinks hold its current secret, and it is not due for weeks. */
async function rotatedOnce(onDrift: 'redeliver' | 'rotate' | 'report' = 'rotate') {
  const world = openWorld();
  const token = world.token('ingest', { settings: { onDrift } });
  expect(await rotateToken(token.policy, world.process(), { lockWaitMs: 0 })).toMatchObject({ action: 'rotated' });
  return { world, ...token, current: world.service.committed()[0]!.newId! };
}

describe('drift: a sink that no longer holds the current secret', () => {
  it.each(
    named([
      {
        case: 'a sink that lost its secret is repaired by a rotation, and both sinks get the new secret',
        damage: 'lose',
        kind: 'missing',
      },
      {
        case: 'a sink holding another secret is repaired by a rotation',
        damage: 'overwrite',
        kind: 'foreign',
      },
    ] as const),
  )('%s', async (_case, { damage, kind }) => {
    const { world, policy, current } = await rotatedOnce();
    if (damage === 'lose') world.destinations.lose('ingest-b');
    else world.destinations.put('ingest-b', 'xaat-someone-elses-secret');

    const run = world.process();
    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    expect(outcome).toMatchObject({
      action: 'rotated',
      check: 'sinkDrift',
      oldId: current,
      drift: [{ target: 'memory:ingest-b', sink: 'memory ingest-b', kind }],
      sinks: [
        { sink: 'memory ingest-a', result: 'updated' },
        { sink: 'memory ingest-b', result: damage === 'lose' ? 'created' : 'updated' },
      ],
    });
    expect(outcome.drift![0]).not.toHaveProperty('initial');
    expect(needsAttention(outcome), 'repaired drift needs nobody').toBe(false);
    expect(world.service.committed()).toHaveLength(2);
    await expectSettled(world, run.view, policy);
  });

  it.each(
    named([
      { case: 'a sink that lost its secret gets the held current secret again: no new token', damage: 'lose', kind: 'missing' },
      { case: 'a sink holding another secret gets the held current secret again: no new token', damage: 'overwrite', kind: 'foreign' },
    ] as const),
  )('%s (onDrift: redeliver, the default)', async (_case, { damage, kind }) => {
    const { world, policy, current } = await rotatedOnce('redeliver');
    const secret = world.destinations.secret('ingest-a');
    if (damage === 'lose') world.destinations.lose('ingest-b');
    else world.destinations.put('ingest-b', 'xaat-someone-elses-secret');

    const run = world.process();
    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    expect(outcome).toMatchObject({
      action: 'redelivered',
      check: 'sinkDrift',
      oldId: current,
      drift: [{ target: 'memory:ingest-b', sink: 'memory ingest-b', kind }],
      // Only the sink that lacked it is written.
      sinks: [{ sink: 'memory ingest-b', result: damage === 'lose' ? 'created' : 'updated' }],
    });
    expect(needsAttention(outcome)).toBe(false);
    expect(world.service.committed(), 'no regenerate').toHaveLength(1);
    expect(world.destinations.secret('ingest-b')).toBe(secret);
    await expectSettled(world, run.view, policy);
    // And the next check finds nothing to do.
    expect(await rotateToken(policy, world.process(), { lockWaitMs: 0 })).toMatchObject({ action: 'skipped', check: 'notDue' });
  });

  it('with onDrift report, a lost sink is reported in the outcome and nothing is regenerated', async () => {
    const { world, policy, current } = await rotatedOnce('report');
    world.destinations.lose('ingest-b');
    const run = world.process();
    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    expect(outcome).toMatchObject({
      action: 'skipped',
      check: 'notDue',
      oldId: current,
      drift: [{ sink: 'memory ingest-b', kind: 'missing' }],
    });
    expect(needsAttention(outcome), 'unrepaired drift needs someone').toBe(true);
    expect(world.service.committed()).toHaveLength(1);
    expect(world.destinations.secret('ingest-b')).toBeUndefined();
    expect(world.logs.text()).toMatch(/a sink does not hold the current secret: memory ingest-b is missing/);
  });

  it('a sink that cannot be read is reported, never rotated for', async () => {
    const { world, policy } = await rotatedOnce();
    world.destinations.failReads('ingest-b');
    const outcome = await rotateToken(policy, world.process(), { lockWaitMs: 0 });
    expect(outcome).toMatchObject({
      action: 'skipped',
      check: 'notDue',
      drift: [{ sink: 'memory ingest-b', kind: 'unreadable', detail: expect.stringMatching(/cannot read memory ingest-b/) }],
    });
    expect(needsAttention(outcome)).toBe(true);
    expect(world.service.committed()).toHaveLength(1);
  });
});

describe("a name's first run", () => {
  it('adopts what its sinks already hold: not due, nothing regenerated, the sinks recorded as adopted', async () => {
    const world = openWorld();
    const { policy, id, secret } = world.token('ingest', { expiresInMs: 60 * DAY });
    world.destinations.put('ingest-a', secret);
    world.destinations.put('ingest-b', secret);

    const run = world.process();
    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    expect(outcome).toMatchObject({ action: 'skipped', check: 'notDue', oldId: id });
    expect(outcome).not.toHaveProperty('drift');
    expect(world.service.regenerates).toEqual([]);
    expect(world.destinations.writes).toEqual([]);
    const record = await expectSettled(world, run.view, policy);
    expect(record).toMatchObject({ currentId: id, adoptedId: id, lastRotatedAt: null });
    expect(Object.values(record.sinks!).map((s) => s.how)).toEqual(['adopted', 'adopted']);

    // And the next run finds nothing changed, so writes nothing.
    const again = world.process();
    expect(await rotateToken(policy, again, { lockWaitMs: 0 })).toMatchObject({ action: 'skipped', check: 'notDue' });
    expect(await again.state.read('ingest')).toEqual(record);
  });

  it('delivers to a sink that is still empty the secret another sink holds, without rotating, the drift marked as initial', async () => {
    const world = openWorld();
    const { policy, secret } = world.token('ingest', { expiresInMs: 60 * DAY });
    world.destinations.put('ingest-a', secret);

    const run = world.process();
    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    expect(outcome).toMatchObject({
      action: 'redelivered',
      check: 'sinkDrift',
      drift: [{ sink: 'memory ingest-b', kind: 'missing', initial: true }],
    });
    expect(world.service.regenerates).toEqual([]);
    const record = await expectSettled(world, run.view, policy);
    expect(record.secret).toMatchObject({ how: 'adopted', value: { plain: secret } });
  });

  it('rotates a name whose sinks are all empty on first sight: no secret is known anywhere to deliver', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest', { expiresInMs: 60 * DAY });
    const run = world.process();
    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    expect(outcome).toMatchObject({
      action: 'rotated',
      check: 'sinkDrift',
      reason: expect.stringContaining('the current secret is unknown'),
    });
    expect(world.service.regenerates).toHaveLength(1);
    await expectSettled(world, run.view, policy);
  });

  it("over a lost state folder, takes the current id from the sinks' metadata, never the long-replaced policy id", async () => {
    const { world, policy, id, current } = await rotatedOnce();
    world.clock.advance(2 * DAY); // the policy's token is long gone
    const fresh = world.process({ backend: new MemoryStateStorage(world.clock).open() });
    const looked = world.service.retrieves.length;

    const outcome = await rotateToken(policy, fresh, { lockWaitMs: 0 });
    expect(outcome).toMatchObject({
      action: 'skipped',
      check: 'notDue',
      oldId: current,
      reason: expect.stringContaining(`(current id ${current} recovered from the sinks' metadata)`),
    });
    expect(world.service.retrieves.slice(looked), 'only the current token was looked up').toEqual([current]);
    expect(world.service.committed()).toHaveLength(1);
    expect(await fresh.state.read('ingest')).toMatchObject({ currentId: current, adoptedId: id });
  });
});

import { describe, expect, it } from 'vitest';

import { SimulatedCrash } from '../../src/rotation/deps.js';
import { rotateToken } from '../../src/rotation/rotate-token.js';
import { keyIdOf } from '../../src/state/secret-box.js';
import type { StateRecord } from '../../src/state/state-record.js';
import { DAY, newStateKey, openWorld, type World } from '../fakes/fake-deps.js';
import type { MemoryStateBackend } from '../fakes/memory-state-backend.js';

/** A view of the state that counts the records written through it. */
function countingWrites(world: World): MemoryStateBackend & { written: StateRecord[] } {
  const view = world.storage.open();
  const written: StateRecord[] = [];
  return {
    ...view,
    written,
    state: {
      ...view.state,
      write: async (record) => {
        written.push(record);
        return view.state.write(record);
      },
    },
  };
}

/** A name rotated once and settled, not due for weeks. */
async function settled(options: { stateKey?: ReturnType<typeof newStateKey>; onDrift?: 'report' | 'redeliver' } = {}) {
  const world = openWorld();
  const token = world.token('ingest', { settings: { onDrift: options.onDrift ?? 'report' } });
  await rotateToken(token.policy, world.process({ stateKey: options.stateKey }), { lockWaitMs: 0 });
  const current = world.service.committed()[0]!.newId!;
  return {
    world,
    policy: token.policy,
    current,
    raw: () => JSON.parse(world.storage.readRaw('state', 'ingest')!) as Record<string, unknown>,
  };
}

describe('a check that finds the name not due', () => {
  it('writes nothing when nothing changed, and says so in the outcome', async () => {
    const { world, policy, current } = await settled();
    world.clock.advance(DAY);
    const backend = countingWrites(world);
    const outcome = await rotateToken(policy, world.process({ backend }), { lockWaitMs: 0 });
    expect(outcome).toMatchObject({ action: 'skipped', check: 'notDue', oldId: current, sinks: [], orphans: [] });
    expect(outcome).not.toHaveProperty('drift');
    expect(backend.written).toEqual([]);
  });

  it('records an expiry the service moved since (extended by hand in its console)', async () => {
    const { world, policy, current } = await settled();
    const extended = world.at(90 * DAY);
    world.service.token(current)!.expiresAt = extended;
    const backend = countingWrites(world);
    const outcome = await rotateToken(policy, world.process({ backend }), { lockWaitMs: 0 });
    expect(outcome).toMatchObject({ action: 'skipped', expiresAt: extended.toISOString() });
    expect(backend.written).toHaveLength(1);
    expect(await backend.state.read('ingest')).toMatchObject({ currentId: current, expiresAt: extended.toISOString() });
  });

  it('records a sink found holding the current secret that the record did not know of, as adopted', async () => {
    const { world, policy, raw } = await settled();
    const record = raw() as { sinks: Record<string, unknown> };
    const { 'memory:ingest-b': _forgotten, ...kept } = record.sinks;
    world.storage.writeRaw('state', 'ingest', JSON.stringify({ ...record, sinks: kept }));
    const backend = countingWrites(world);
    expect(await rotateToken(policy, world.process({ backend }), { lockWaitMs: 0 })).toMatchObject({ action: 'skipped' });
    expect(backend.written).toHaveLength(1);
    expect((await backend.state.read('ingest'))?.sinks).toMatchObject({
      'memory:ingest-a': { how: 'delivered' },
      'memory:ingest-b': { how: 'adopted', at: world.clock.now().toISOString() },
    });
  });

  it('seals the held secret again with a new state key (the previous one given), without a rotation', async () => {
    const first = newStateKey();
    const { world, policy, raw } = await settled({ stateKey: first });
    const second = newStateKey();
    const backend = countingWrites(world);
    const run = world.process({ backend, stateKey: second, previousStateKeys: [first] });
    expect(await rotateToken(policy, run, { lockWaitMs: 0 })).toMatchObject({ action: 'skipped', check: 'notDue' });
    expect(backend.written).toHaveLength(1);
    expect(raw()).toMatchObject({ secret: { value: { sealed: { kid: keyIdOf(second) } } } });
    expect(world.service.regenerates).toHaveLength(1);
  });

  it('stores the current secret for a record from before the state held secrets, taken from the sinks that match it', async () => {
    const { world, policy, raw, current } = await settled();
    const { secret: _none, ...legacy } = raw();
    world.storage.writeRaw('state', 'ingest', JSON.stringify(legacy));
    const backend = countingWrites(world);
    expect(await rotateToken(policy, world.process({ backend }), { lockWaitMs: 0 })).toMatchObject({ action: 'skipped', check: 'notDue' });
    expect(backend.written).toHaveLength(1);
    expect(raw()).toMatchObject({ currentId: current, secret: { how: 'adopted', value: { plain: world.service.token(current)!.secret } } });
    expect(world.service.regenerates).toHaveLength(1);
  });

  it('records the sinks of a record from before sinks were recorded, even when none can be read', async () => {
    const { world, policy, raw } = await settled();
    const { sinks: _none, ...legacy } = raw();
    world.storage.writeRaw('state', 'ingest', JSON.stringify(legacy));
    world.destinations.failReads('ingest-a');
    world.destinations.failReads('ingest-b');
    const backend = countingWrites(world);
    const outcome = await rotateToken(policy, world.process({ backend }), { lockWaitMs: 0 });
    expect(outcome).toMatchObject({ action: 'skipped', drift: [{ kind: 'unreadable' }, { kind: 'unreadable' }] });
    expect(backend.written).toHaveLength(1);
    expect(raw()).toHaveProperty('sinks');
  });

  it('with no copy of the current secret and no sink holding it, reports the drift and stores no secret', async () => {
    const { world, policy, raw, current } = await settled();
    const { secret: _none, ...legacy } = raw();
    world.storage.writeRaw('state', 'ingest', JSON.stringify(legacy));
    world.destinations.lose('ingest-a');
    world.destinations.put('ingest-b', 'xaat-someone-elses-secret');
    // And the service moved its expiry: the record is written, still without a secret.
    const extended = world.at(90 * DAY);
    world.service.token(current)!.expiresAt = extended;
    const outcome = await rotateToken(policy, world.process(), { lockWaitMs: 0 });
    expect(outcome).toMatchObject({
      action: 'skipped',
      drift: [
        { sink: 'memory ingest-a', kind: 'missing' },
        { sink: 'memory ingest-b', kind: 'foreign' },
      ],
    });
    expect(raw()).toMatchObject({ expiresAt: extended.toISOString() });
    expect(raw()).not.toHaveProperty('secret');
  });
});

describe('a rotation whose commit was written just before its process died', () => {
  it('is finished by erasing its entry: the commit is recognised, and the state is not written again', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    const dying = world.process({ crashAt: { step: 'committed' }, lockOnCrash: 'released' });
    await expect(rotateToken(policy, dying, { lockWaitMs: 0 })).rejects.toBeInstanceOf(SimulatedCrash);
    const minted = world.service.committed()[0]!.newId!;
    const committed = world.storage.readRaw('state', 'ingest');
    expect(JSON.parse(committed!)).toMatchObject({ currentId: minted });

    const backend = countingWrites(world);
    expect(await rotateToken(policy, world.process({ backend }), { lockWaitMs: 0 })).toMatchObject({ action: 'rotated', check: 'resumed' });
    expect(backend.written).toEqual([]);
    expect(world.storage.readRaw('state', 'ingest')).toBe(committed);
    expect(world.storage.readRaw('journal', 'ingest')).toBeUndefined();
    expect(world.service.regenerates).toHaveLength(1);
  });
});

import { describe, expect, it } from 'vitest';

import { StateError } from '../../src/errors.js';
import { rotateToken } from '../../src/rotation/rotate-token.js';
import type { JournalEntry } from '../../src/state/journal-entry.js';
import type { StateRecord } from '../../src/state/state-record.js';
import { expectNoSecretIn, expectSettled, mustHold, sinkKeys } from '../fakes/expectations.js';
import { newStateKey, openWorld, type World } from '../fakes/fake-deps.js';
import type { MemoryStateBackend } from '../fakes/memory-state-backend.js';

/**
 * A view of the state whose disk fails once the regenerate is in flight: the staged entry cannot
 * be journalled; with `stateFails`, the new id cannot be recorded in the state either; with
 * `eraseFails`, the intent cannot be erased.
 */
function failingDisk(world: World, fails: { stateFails?: boolean; eraseFails?: boolean } = {}): MemoryStateBackend {
  const view = world.storage.open();
  return {
    ...view,
    journal: {
      ...view.journal,
      write: async (entry: JournalEntry) => {
        if (entry.phase === 'staged') throw new StateError('cannot write the journal: no space left on device (injected)');
        return view.journal.write(entry);
      },
      erase: async (name: string) => {
        if (fails.eraseFails) throw new StateError('cannot erase the journal entry: read-only file system (injected)');
        return view.journal.erase(name);
      },
    },
    state: {
      ...view.state,
      write: async (record: StateRecord) => {
        if (fails.stateFails) throw new StateError('cannot write the state: read-only file system (injected)');
        return view.state.write(record);
      },
    },
  };
}

describe('a new secret that cannot be journalled (the state disk fails while the regenerate is in flight)', () => {
  it('is delivered from memory to every sink and committed in the state; the run still fails, and says so', async () => {
    const world = openWorld();
    const { policy, id } = world.token('ingest');
    const run = world.process({ backend: failingDisk(world) });

    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    const [minted] = world.service.committed();
    expect(outcome).toMatchObject({
      action: 'failed',
      oldId: id,
      newId: minted!.newId,
      orphans: [],
      sinks: [
        { sink: 'memory ingest-a', result: 'created' },
        { sink: 'memory ingest-b', result: 'created' },
      ],
      error: { code: 'ERR_STAGING_FAILED', message: expect.stringMatching(/recorded in the state/) },
    });
    expect(outcome.error!.message, 'it names both tokens and why the journal failed').toMatch(
      new RegExp(`${id} -> ${minted!.newId}.*no space left on device`),
    );
    expect(outcome, 'nothing stays staged for a next run to deliver').not.toHaveProperty('pending');
    // Committed: the next run starts from the delivered token, and regenerates nothing.
    const record = await expectSettled(world, world.storage.open(), policy, minted!.newId);
    expect(record).toMatchObject({ lineage: [{ id, expiresAt: minted!.existingTokenExpiresAt }] });
    const next = world.process();
    expect(await rotateToken(policy, next, { lockWaitMs: 0 })).toMatchObject({ action: 'skipped', oldId: minted!.newId });
    expect(world.service.regenerates).toHaveLength(1);
    expectNoSecretIn(world.logs.text(), world.service);
  });

  it('committed with a state key, the state holds the secret sealed, never plain', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    const key = newStateKey();
    await rotateToken(policy, world.process({ backend: failingDisk(world), stateKey: key }), { lockWaitMs: 0 });
    const minted = world.service.committed()[0]!.newId!;
    const raw = world.storage.readRaw('state', 'ingest')!;
    expect(JSON.parse(raw)).toMatchObject({ currentId: minted, secret: { how: 'rotated', value: { sealed: expect.anything() } } });
    expect(raw).not.toContain(world.service.token(minted)!.secret);
  });

  it('is delivered even once the stop deadline has passed: it exists nowhere else', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    const deadline = new AbortController();
    world.service.onRegenerate({ kind: 'answer', meanwhile: () => deadline.abort() });
    const run = world.process({ backend: failingDisk(world) });

    const outcome = await rotateToken(policy, run, { lockWaitMs: 0, signal: deadline.signal });
    const minted = world.service.committed()[0]!.newId!;
    expect(outcome).toMatchObject({ action: 'failed', error: { code: 'ERR_STAGING_FAILED' } });
    for (const key of sinkKeys(policy)) expect(world.destinations.secret(key)).toBe(world.service.token(minted)!.secret);
  });

  it('when the state cannot record it either, the sinks have it, the state keeps the old id, and the run says how to keep it', async () => {
    const world = openWorld();
    const { policy, id } = world.token('ingest');
    const run = world.process({ backend: failingDisk(world, { stateFails: true }) });

    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    const minted = world.service.committed()[0]!.newId!;
    expect(outcome).toMatchObject({
      action: 'failed',
      newId: minted,
      orphans: [],
      error: { code: 'ERR_STAGING_FAILED', message: expect.stringContaining(`id: ${JSON.stringify(minted)}`) },
    });
    expect(outcome.error!.message, 'it names both tokens and both errors').toMatch(
      new RegExp(`${id} -> ${minted}.*no space left on device.*read-only file system.*start from ${id}`),
    );
    for (const key of sinkKeys(policy)) expect(world.destinations.secret(key)).toBe(world.service.token(minted)!.secret);
    expect(world.storage.readRaw('state', 'ingest')).toBeUndefined();
    expect(world.storage.readRaw('journal', 'ingest'), 'the intent is erased').toBeUndefined();
    expect(id).not.toBe(minted);
  });

  it('when a sink refuses it, it cannot be kept: reported as an orphan, nothing committed, the intent erased', async () => {
    const world = openWorld();
    const { policy, id } = world.token('ingest');
    world.destinations.failWrites('ingest-b');
    const run = world.process({ backend: failingDisk(world) });

    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    const [minted] = world.service.committed();
    expect(outcome).toMatchObject({
      action: 'failed',
      orphans: [{ name: 'ingest', oldId: id, newId: minted!.newId, oldTokenWorksUntil: minted!.existingTokenExpiresAt }],
      error: {
        code: 'ERR_STAGING_FAILED',
        message: expect.stringMatching(/reached only memory ingest-a, not memory ingest-b.*rotates 'ingest' again from/),
      },
    });
    expect(outcome).not.toHaveProperty('pending');
    expect(await world.storage.open().state.read('ingest'), 'nothing committed, the failure counted').toMatchObject({
      currentId: id,
      consecutiveFailures: 1,
      lastFailure: { code: 'ERR_STAGING_FAILED' },
    });
    expect(world.storage.readRaw('journal', 'ingest'), 'the intent is erased').toBeUndefined();

    // The next run rotates again from the old token, which still works.
    world.destinations.heal('ingest-b');
    const next = world.process();
    expect(await rotateToken(policy, next, { lockWaitMs: 0 })).toMatchObject({ action: 'rotated', oldId: id });
    expect(world.service.committed(id)).toHaveLength(2);
    await expectSettled(world, next.view, policy);
  });

  it.each([
    ['one of three sinks refuses it', ['ingest-c'], 'reached only memory ingest-a, memory ingest-b, not memory ingest-c'],
    ['two of three sinks refuse it', ['ingest-b', 'ingest-c'], 'reached only memory ingest-a, not memory ingest-b, memory ingest-c'],
  ])('%s: the run names where the orphaned secret went and where not', async (_case, refusing, said) => {
    const world = openWorld();
    const { policy } = world.token('ingest', { sinks: ['ingest-a', 'ingest-b', 'ingest-c'] });
    for (const key of refusing) world.destinations.failWrites(key);
    const outcome = await rotateToken(policy, world.process({ backend: failingDisk(world) }), { lockWaitMs: 0 });
    expect(outcome).toMatchObject({ action: 'failed', orphans: [expect.anything()], error: { code: 'ERR_STAGING_FAILED' } });
    expect(outcome.error!.message).toContain(said);
  });

  it('when no sink takes it, it is reported as an orphan and nothing is committed', async () => {
    const world = openWorld();
    const { policy, id } = world.token('ingest');
    world.destinations.failWrites('ingest-a');
    world.destinations.failWrites('ingest-b');
    const outcome = await rotateToken(policy, world.process({ backend: failingDisk(world) }), { lockWaitMs: 0 });
    const [minted] = world.service.committed();
    expect(outcome).toMatchObject({
      action: 'failed',
      orphans: [{ oldId: id, newId: minted!.newId }],
      error: { code: 'ERR_STAGING_FAILED', message: expect.stringMatching(/no sink took the secret/) },
    });
    expect(await world.storage.open().state.read('ingest')).toMatchObject({ currentId: id, consecutiveFailures: 1 });
    expect(world.storage.readRaw('journal', 'ingest')).toBeUndefined();
  });

  it('an intent that cannot be erased does not hide what happened: the outcome still tells it', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    const outcome = await rotateToken(policy, world.process({ backend: failingDisk(world, { eraseFails: true }) }), { lockWaitMs: 0 });
    const minted = world.service.committed()[0]!.newId!;
    expect(outcome).toMatchObject({ action: 'failed', newId: minted, error: { code: 'ERR_STAGING_FAILED' } });
    expect(JSON.parse(world.storage.readRaw('state', 'ingest')!)).toMatchObject({ currentId: minted });
    expect(JSON.parse(world.storage.readRaw('journal', 'ingest')!)).toMatchObject({ phase: 'intent' });

    // The next run finds the intent's rotation committed: it erases the intent and checks the name as usual.
    const next = world.process();
    expect(await rotateToken(policy, next, { lockWaitMs: 0 })).toMatchObject({ action: 'skipped', oldId: minted, orphans: [] });
    expect(await next.journal.read('ingest')).toBeUndefined();
    expect(world.service.regenerates, 'nothing reconciled, nothing sent again').toHaveLength(1);
  });

  it('a process that loses its lock while delivering it reports the secret as an orphan and writes no more', async () => {
    const world = openWorld();
    const { policy, id } = world.token('ingest');
    const backend = failingDisk(world);
    const taker = world.storage.open();
    world.destinations.duringWrite('ingest-a', async () => {
      world.storage.crash(backend.process);
      await mustHold(taker.locks.acquire('ingest', { waitMs: 0 }));
    });

    const outcome = await rotateToken(policy, world.process({ backend }), { lockWaitMs: 0 });
    const [minted] = world.service.committed();
    expect(outcome).toMatchObject({
      action: 'failed',
      error: { code: 'ERR_LOCK_LOST' },
      orphans: [{ oldId: id, newId: minted!.newId }],
    });
    expect(world.destinations.writesTo('ingest-b'), 'no sink written after the lock was lost').toEqual([]);
    expect(world.storage.readRaw('state', 'ingest')).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';

import type { TokenServiceClient } from '../../src/api/token-service-client.js';
import { rotateToken } from '../../src/rotation/rotate-token.js';
import { expectNoSecretIn, expectSettled, mustHold } from '../fakes/expectations.js';
import { newStateKey, openWorld, type World } from '../fakes/fake-deps.js';

/**
 * The service, but every regenerate answers a secret whose id cannot be used (the service acted:
 * the new token exists, and only its console shows its id). `retrieving` runs before each retrieve.
 */
function untrackableAnswers(world: World, retrieving?: (id: string) => void | Promise<void>): TokenServiceClient {
  return {
    retrieve: async (id, options) => {
      await retrieving?.(id);
      options?.signal?.throwIfAborted();
      return world.service.retrieve(id);
    },
    regenerate: async (id, times) => {
      const answer = await world.service.regenerate(id, times);
      if (answer.kind !== 'tracked') throw new Error('the fake service answers tracked tokens');
      return { kind: 'untrackable', problem: 'its id is not usable (injected)', secret: answer.secret };
    },
  };
}

const EMERGENCY = { lockWaitMs: 0, force: { reason: 'held secret' } } as const;

/** A due name whose rotation ended with its new secret held: `minted` is the id the service's console shows. */
async function heldRotation(stateKey?: ReturnType<typeof newStateKey>) {
  const world = openWorld();
  const { policy, id } = world.token('ingest');
  const first = await rotateToken(policy, world.process({ api: untrackableAnswers(world), stateKey }), { lockWaitMs: 0 });
  expect(first).toMatchObject({ action: 'failed', error: { code: 'ERR_SECRET_HELD' } });
  const minted = world.service.committed()[0]!.newId!;
  const held = world.storage.readRaw('journal', 'ingest');
  expect(JSON.parse(held!)).toMatchObject({ phase: 'held' });
  return { world, policy, id, minted, held: held!, secret: world.service.token(minted)!.secret };
}

describe('a secret held in the journal, delivered as the token an operator names (rotate --held-id)', () => {
  it('is confirmed with the service, delivered to every sink and committed as that id, without a regenerate', async () => {
    const { world, policy, id, minted } = await heldRotation();
    const run = world.process();

    const outcome = await rotateToken(policy, run, { ...EMERGENCY, heldId: minted });
    expect(outcome).toMatchObject({
      action: 'rotated',
      check: 'resumed',
      oldId: id,
      newId: minted,
      newExpiresAt: world.service.token(minted)!.expiresAt!.toISOString(),
      verification: { result: 'passed' },
    });
    expect(world.service.retrieves, 'the named id was confirmed with the service').toContain(minted);
    expect(world.service.regenerates, 'nothing regenerated for it').toHaveLength(1);
    const record = await expectSettled(world, run.view, policy, minted);
    expect(record).toMatchObject({ expiresAt: world.service.token(minted)!.expiresAt!.toISOString() });
    expectNoSecretIn(world.logs.text(), world.service);
  });

  it('with --skip-verify too, it is committed without verification, and the reason names the id given', async () => {
    const { world, policy, minted } = await heldRotation();
    world.destinations.corruptWrites('ingest-a');
    const outcome = await rotateToken(policy, world.process(), { ...EMERGENCY, heldId: minted, skipVerify: true });
    expect(outcome).toMatchObject({
      action: 'rotated',
      check: 'resumed',
      newId: minted,
      reason: expect.stringContaining(minted),
      verification: { result: 'skipped' },
    });
    expect(JSON.parse(world.storage.readRaw('state', 'ingest')!)).toMatchObject({ currentId: minted });
  });

  it('without --held-id, the name stays stopped: the entry is kept as it is and nothing is sent or written', async () => {
    const { world, policy, held } = await heldRotation();
    const outcome = await rotateToken(policy, world.process(), EMERGENCY);
    expect(outcome).toMatchObject({ action: 'failed', error: { code: 'ERR_SECRET_HELD' } });
    expect(world.service.regenerates).toHaveLength(1);
    expect(world.storage.readRaw('journal', 'ingest')).toBe(held);
    expect(world.destinations.writes).toEqual([]);
  });

  it.each([
    ['an id that is not a token id', '../tokens'],
    ['an id of a token the service does not know', 'no-such-token'],
  ])('%s is refused: the entry is kept as it is, no sink written', async (_case, heldId) => {
    const { world, policy, held } = await heldRotation();
    const outcome = await rotateToken(policy, world.process(), { ...EMERGENCY, heldId });
    expect(outcome).toMatchObject({ action: 'failed', stage: 'rotation' });
    expect(world.storage.readRaw('journal', 'ingest')).toBe(held);
    expect(world.destinations.writes).toEqual([]);
    expect(world.service.regenerates).toHaveLength(1);
  });

  it('an id that is not a token id is refused before the service is asked, and echoed only in part', async () => {
    const { world, policy } = await heldRotation();
    const retrieves = world.service.retrieves.length;
    const typo = `${'x'.repeat(300)}/`;
    const outcome = await rotateToken(policy, world.process(), { ...EMERGENCY, heldId: typo });
    expect(outcome).toMatchObject({ action: 'failed', error: { code: 'ERR_STATE' } });
    expect(world.service.retrieves.slice(retrieves)).toEqual([]);
    expect(outcome.error!.message).toContain('x'.repeat(80));
    expect(outcome.error!.message).not.toContain('x'.repeat(81));
  });

  it('sealed with a state key, it is not delivered without that key: the entry is kept as it is', async () => {
    const key = newStateKey();
    const { world, policy, minted, held, secret } = await heldRotation(key);
    expect(held).not.toContain(secret);
    const outcome = await rotateToken(policy, world.process(), { ...EMERGENCY, heldId: minted });
    expect(outcome).toMatchObject({ action: 'failed', error: { code: 'ERR_STATE', message: expect.stringMatching(/ROTATOR_STATE_KEY/) } });
    expect(world.storage.readRaw('journal', 'ingest')).toBe(held);
    expect(world.destinations.writes).toEqual([]);

    const keyed = world.process({ stateKey: key });
    expect(await rotateToken(policy, keyed, { ...EMERGENCY, heldId: minted })).toMatchObject({ action: 'rotated', newId: minted });
    await expectSettled(world, keyed.view, policy, minted);
  });

  it('a sink that refuses it leaves the secret staged as that id (sealed), and the next run delivers it without --held-id', async () => {
    const key = newStateKey();
    const { world, policy, minted, secret } = await heldRotation(key);
    world.destinations.failWrites('ingest-b');
    const run = world.process({ stateKey: key });

    const outcome = await rotateToken(policy, run, { ...EMERGENCY, heldId: minted });
    expect(outcome).toMatchObject({ action: 'failed', newId: minted, pending: ['memory ingest-b'] });
    const raw = world.storage.readRaw('journal', 'ingest')!;
    expect(raw, 'the staged secret is sealed').not.toContain(secret);
    expect(JSON.parse(raw)).toMatchObject({
      phase: 'staged',
      staged: { newId: minted, stagedAt: world.clock.now().toISOString(), secret: { sealed: expect.anything() } },
      delivered: ['memory:ingest-a'],
    });
    expect(JSON.parse(raw)).not.toHaveProperty('held');

    world.destinations.heal('ingest-b');
    const next = world.process({ stateKey: key });
    expect(await rotateToken(policy, next, { lockWaitMs: 0 })).toMatchObject({ action: 'rotated', check: 'resumed', newId: minted });
    expect(world.service.regenerates).toHaveLength(1);
    await expectSettled(world, next.view, policy, minted);
  });

  it("the stop's deadline reached while confirming the id: interrupted, the entry stays held and nothing is written", async () => {
    const { world, policy, minted, held } = await heldRotation();
    const deadline = new AbortController();
    const api = untrackableAnswers(world, (id) => {
      if (id === minted) deadline.abort();
    });
    const outcome = await rotateToken(policy, world.process({ api }), { ...EMERGENCY, heldId: minted, signal: deadline.signal });
    expect(outcome).toMatchObject({ action: 'interrupted', stage: 'rotation' });
    expect(world.storage.readRaw('journal', 'ingest')).toBe(held);
    expect(world.destinations.writes).toEqual([]);
  });

  it('a process that lost its lock while confirming the id writes nothing: the entry stays held for the new holder', async () => {
    const { world, policy, minted, held } = await heldRotation();
    const taker = world.storage.open();
    const backend = world.storage.open();
    const api = untrackableAnswers(world, async (id) => {
      if (id !== minted) return;
      world.storage.crash(backend);
      await mustHold(taker.locks.acquire('ingest', { waitMs: 0 }));
    });
    const stopped = world.process({ api, backend });

    const outcome = await rotateToken(policy, stopped, { ...EMERGENCY, heldId: minted });
    expect(outcome).toMatchObject({ action: 'failed', error: { code: 'ERR_LOCK_LOST' } });
    expect(world.storage.readRaw('journal', 'ingest')).toBe(held);
    expect(world.destinations.writes).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';

import { SimulatedCrash } from '../../src/rotation/deps.js';
import { rotateToken } from '../../src/rotation/rotate-token.js';
import { openWorld } from '../fakes/fake-deps.js';

/*
 * `rotate NAME --skip-verify` finishes a staged rotation whose verification failed, after a human
 * checked the new token. With nothing staged there is nothing to finish: it must refuse, never fall
 * through to the emergency rotation the `rotate` command otherwise asks for (a regenerate nobody
 * wanted, whose new token nobody verifies).
 */
const SKIP_VERIFY = { lockWaitMs: 0, force: { reason: 'checked by hand' }, skipVerify: true } as const;

describe('rotate --skip-verify with nothing staged', () => {
  it('refuses with ERR_VERIFY_FAILED: no regenerate, no sink written, the current token stays current', async () => {
    const world = openWorld();
    const { policy, id } = world.token('ingest');
    const run = world.process();

    const outcome = await rotateToken(policy, run, SKIP_VERIFY);
    expect(outcome).toMatchObject({
      action: 'failed',
      oldId: id,
      sinks: [],
      orphans: [],
      error: { code: 'ERR_VERIFY_FAILED', message: expect.stringMatching(/nothing staged to finish/) },
    });
    expect(outcome).not.toHaveProperty('newId');
    expect(world.service.regenerates, 'nothing regenerated').toEqual([]);
    expect(world.destinations.writes, 'no sink written').toEqual([]);
    expect(await run.journal.read('ingest')).toBeUndefined();
  });

  it('refuses when a rotation was committed and settled: the committed token is named, nothing regenerated', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    expect(await rotateToken(policy, world.process(), { lockWaitMs: 0 })).toMatchObject({ action: 'rotated' });
    const current = world.service.committed()[0]!.newId!;
    const writes = world.destinations.writes.length;

    const outcome = await rotateToken(policy, world.process(), SKIP_VERIFY);
    expect(outcome).toMatchObject({ action: 'failed', oldId: current, error: { code: 'ERR_VERIFY_FAILED' } });
    expect(world.service.regenerates).toHaveLength(1);
    expect(world.destinations.writes).toHaveLength(writes);
  });

  it('refuses when only an intent is journalled: the intent is left for a run that reconciles it, nothing sent', async () => {
    const world = openWorld();
    const { policy, id } = world.token('ingest');
    // Died right after journalling its intent, before the regenerate was sent.
    const dying = world.process({ crashAt: { step: 'intent' }, lockOnCrash: 'released' });
    await expect(rotateToken(policy, dying, { lockWaitMs: 0 })).rejects.toBeInstanceOf(SimulatedCrash);
    const journalled = world.storage.readRaw('journal', 'ingest');
    expect(journalled).toBeDefined();

    const outcome = await rotateToken(policy, world.process(), SKIP_VERIFY);
    expect(outcome).toMatchObject({ action: 'failed', oldId: id, error: { code: 'ERR_VERIFY_FAILED' } });
    expect(world.service.regenerates, 'no regenerate sent, not even by reconciling').toEqual([]);
    expect(
      world.service.retrieves.filter((r) => r !== id),
      'no other token looked up',
    ).toEqual([]);
    expect(world.storage.readRaw('journal', 'ingest'), 'the intent entry is untouched').toBe(journalled);
    expect(world.destinations.writes).toEqual([]);
  });
});

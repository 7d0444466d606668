import { describe, expect, it } from 'vitest';

import type { TokenOutcome } from '../../src/rotation/outcome.js';
import { rotateToken } from '../../src/rotation/rotate-token.js';
import { crashedAt, expectNoSecretIn, expectSettled, mustHold, named } from '../fakes/expectations.js';
import { DAY, openWorld } from '../fakes/fake-deps.js';

describe('a name whose lock another live process holds', () => {
  it.each(
    named([
      {
        case: 'when it is not due, the run skips it and says who holds it',
        expiresInMs: 60 * DAY,
        unfinished: false,
        outcome: { action: 'skipped', check: 'busy', reason: expect.stringMatching(/^not due; another token-rotator \(process 1 since /) },
      },
      {
        case: 'when it is due, the run fails with ERR_LOCKED, since it did not do its job',
        expiresInMs: DAY,
        unfinished: false,
        outcome: {
          action: 'failed',
          check: 'busy',
          reason: expect.stringMatching(/^due \(expires in 1d, within renewBefore 7d\), but another token-rotator \(process 1 since /),
          error: { code: 'ERR_LOCKED', message: expect.any(String) },
        },
      },
      {
        case: 'when the holder left an unfinished rotation, the run fails naming its phase, even if the name is not due',
        expiresInMs: 60 * DAY,
        unfinished: true,
        outcome: {
          action: 'failed',
          check: 'busy',
          reason: expect.stringMatching(/holds its lock, with an unfinished rotation of it \(intent\)$/),
          error: { code: 'ERR_LOCKED', message: expect.any(String) },
        },
      },
    ]),
  )('%s', async (_case, { expiresInMs, unfinished, outcome }) => {
    const world = openWorld();
    const { policy, id, secret } = world.token('ingest', { expiresInMs });
    // The sinks already hold the token's secret: only its expiry decides whether it is due.
    for (const key of ['ingest-a', 'ingest-b']) world.destinations.put(key, secret);
    // The holder is alive but stopped: either just holding the name, or right after journalling an intent.
    const holder = world.process({ crashAt: { step: 'intent' } });
    if (unfinished) await crashedAt(rotateToken(policy, holder, { force: { reason: 'rehearsal' } }), 'intent');
    else await mustHold(holder.view.locks.acquire('ingest', { waitMs: 0 }));

    const run = world.process();
    expect(await rotateToken(policy, run, { lockWaitMs: 0 })).toMatchObject({ name: 'ingest', oldId: id, ...outcome });
    expect(world.service.regenerates).toEqual([]);
    expect(world.destinations.writes).toEqual([]);
    expect(await run.state.read('ingest'), 'a busy run records nothing, not even a failure').toBeUndefined();
    expect(world.storage.holderOf('ingest')).toBe(holder.view.process);
  });

  it('is rotated by a run that waits, once the holder lets go within the wait', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    const holder = await mustHold(world.storage.open().locks.acquire('ingest', { waitMs: 0 }));
    setTimeout(() => void holder.release(), 50);
    const run = world.process();
    expect(await rotateToken(policy, run, { lockWaitMs: 5000 })).toMatchObject({ action: 'rotated' });
    await expectSettled(world, run.view, policy);
  });
});

describe('fencing: a process stopped long enough to lose its lock', () => {
  it('when the lock is taken over while the regenerate is in flight, it stops with LockLostError, reports the token it received as an orphan, and writes nothing', async () => {
    const world = openWorld();
    const { policy, id } = world.token('ingest');
    const stopped = world.process();
    const taker = world.storage.open();
    world.service.onRegenerate({
      kind: 'answer',
      // While the answer is on its way, the process is stopped; it is judged gone and another takes over.
      meanwhile: async () => {
        world.storage.crash(stopped.view);
        await mustHold(taker.locks.acquire('ingest', { waitMs: 0 }));
      },
    });

    const outcome = await rotateToken(policy, stopped, { lockWaitMs: 0 });
    const [received] = world.service.committed();
    expect(outcome).toMatchObject({
      action: 'failed',
      error: { code: 'ERR_LOCK_LOST', message: expect.stringMatching(/lost the lock on "ingest".*without side effects/) },
      orphans: [{ name: 'ingest', oldId: id, newId: received!.newId, oldTokenWorksUntil: received!.existingTokenExpiresAt }],
    });
    expect(stopped.process.steps, 'it never got to staging').toEqual(['intent', 'regenerated']);
    expect(world.logs.text()).toMatch(new RegExp(`ORPHANED TOKEN.*The orphan is token ${received!.newId} of 'ingest'`));
    // Nothing written: no sink, no state record (not even the failure), no staged entry.
    expect(world.destinations.writes).toEqual([]);
    expect(await stopped.state.read('ingest')).toBeUndefined();
    expect(await stopped.journal.read('ingest'), 'the intent it wrote while it held the lock is left to the new holder').toMatchObject({
      phase: 'intent',
      oldId: id,
    });
    expect(world.storage.holderOf('ingest'), "its release left the new holder's lock alone").toBe(taker.process);
    expectNoSecretIn(world.logs.text(), world.service);
  });

  it('the new holder then reconciles the intent left behind: the regenerate was applied, so it reports it and rotates again from the old token', async () => {
    const world = openWorld();
    const { policy, id } = world.token('ingest');
    const stopped = world.process();
    const taker = world.storage.open();
    world.service.onRegenerate({
      kind: 'answer',
      meanwhile: async () => {
        world.storage.crash(stopped.view);
        await mustHold(taker.locks.acquire('ingest', { waitMs: 0 }));
      },
    });
    await rotateToken(policy, stopped, { lockWaitMs: 0 });
    world.storage.crash(taker); // the taker was itself only playing the new holder

    const next = world.process();
    const outcome = await rotateToken(policy, next, { lockWaitMs: 0 });
    expect(outcome).toMatchObject({ action: 'rotated', orphans: [{ oldId: id, regeneratedAt: expect.any(String) }] });
    expect(world.service.committed(id)).toHaveLength(2);
    await expectSettled(world, next.view, policy);
  });

  /**
   * A holder stopped in the middle of delivering, whose lock was taken over meanwhile, checks the
   * lock before each sink write and each journal write: once awake it writes no further sink and
   * brings no journal entry back. The one write in flight when it was stopped lands (no check can
   * come between a write's start and its end without fencing at the sink); the new holder's next
   * check finds that sink holding another secret, and repairs it.
   */
  it('when the lock is taken over while it delivers, it writes nothing more, and the sink it was writing is repaired as drift', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    const stopped = world.process();
    // What the other processes did while the holder was stopped, asserted once the holder is back:
    // an assertion failing inside the sink write would be taken for a failed write, and swallowed.
    const meanwhile: TokenOutcome[] = [];
    world.destinations.duringWrite('ingest-a', async () => {
      world.storage.crash(stopped.view);
      meanwhile.push(await rotateToken(policy, world.process(), { lockWaitMs: 0 }));
      meanwhile.push(await rotateToken(policy, world.process(), { lockWaitMs: 0, force: { reason: 'leaked', overlapMs: 0 } }));
    });

    expect(await rotateToken(policy, stopped, { lockWaitMs: 0 })).toMatchObject({ action: 'failed', error: { code: 'ERR_LOCK_LOST' } });
    expect(meanwhile).toMatchObject([
      { action: 'rotated', check: 'resumed' },
      { action: 'rotated', check: 'manual' },
    ]);
    const [delivered] = world.service.committed();
    const current = world.service.committed(delivered!.newId)[0]!.newId!; // what the emergency rotation minted
    const settled = world.process();
    expect(await settled.journal.read('ingest'), 'no stale entry brought back').toBeUndefined();
    expect(world.service.works(world.destinations.secret('ingest-b')), 'the sink it had not reached yet was left alone').toBe(true);

    // Repaired with the current secret the state holds: no new token.
    const regenerates = world.service.regenerates.length;
    const repair = await rotateToken(policy, settled, { lockWaitMs: 0 });
    expect(repair).toMatchObject({ action: 'redelivered', check: 'sinkDrift', drift: [expect.objectContaining({ kind: 'foreign' })] });
    expect(world.service.regenerates).toHaveLength(regenerates);
    await expectSettled(world, world.process().view, policy, current);
  });
});

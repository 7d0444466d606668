import { describe, expect, it } from 'vitest';

import type { RegeneratedToken } from '../../src/api/token-service-client.js';
import {
  ApiError,
  OrphanedTokenError,
  RegenerateAnswerUnusableError,
  RegenerateOutcomeUnknownError,
  SecretHeldError,
} from '../../src/errors.js';
import type { RotationContext } from '../../src/rotation/context.js';
import type { RotationDeps } from '../../src/rotation/deps.js';
import { regenerateJournalled } from '../../src/rotation/regenerate-journalled.js';
import { rotateToken } from '../../src/rotation/rotate-token.js';
import { heldSealContext, sealContext } from '../../src/rotation/seal-context.js';
import { Secret } from '../../src/secret.js';
import type { JournalEntry } from '../../src/state/journal-entry.js';
import { openSecret } from '../../src/state/secret-box.js';
import { expectNoSecretIn } from '../fakes/expectations.js';
import { DAY, HOUR, newStateKey, openWorld } from '../fakes/fake-deps.js';
import { rotationContext } from '../fakes/rotation-context.js';

/*
 * The regenerate itself: the intent journalled before it is sent, the answer staged before anything
 * else happens, every lost or unusable answer reported as an orphan, and never more regenerates than
 * the protocol allows. Each test counts the regenerates the service received.
 */

const OVERLAP = HOUR;

async function due(options: { expiresInMs?: number | null; deps?: (deps: RotationDeps) => RotationDeps } = {}) {
  const world = openWorld();
  const old = world.token('ingest', { expiresInMs: options.expiresInMs === undefined ? DAY : options.expiresInMs });
  const stateKey = newStateKey();
  const run = world.process({ stateKey });
  const deps = options.deps ? options.deps(run) : run;
  const ctx = rotationContext(old.policy, deps);
  const token = await world.service.retrieve(old.id);
  const journal = () => world.storage.open().journal.read('ingest');
  const regenerate = (c: RotationContext = ctx) => regenerateJournalled(c, { token, reason: 'due', overlapMs: OVERLAP });
  return { world, old, run, ctx, token, stateKey, journal, regenerate };
}

describe('a regenerate that is answered', () => {
  it('journals the intent before sending, and stages the answer (sealed) before returning: one regenerate', async () => {
    const { world, old, run, ctx, journal, regenerate, stateKey } = await due();
    let journalledWhileSending: JournalEntry | undefined;
    world.service.onRegenerate({ kind: 'answer', meanwhile: async () => void (journalledWhileSending = await journal()) });
    const now = world.clock.now().toISOString();
    const intent = {
      version: 1,
      name: 'ingest',
      rotationId: expect.any(String),
      phase: 'intent',
      reason: 'due',
      startedAt: now,
      oldId: old.id,
      oldExpiresAt: world.at(DAY).toISOString(),
      existingTokenExpiresAt: world.at(OVERLAP).toISOString(),
      newTokenExpiresAt: world.at(old.policy.settings.lifetimeMs!).toISOString(),
      delivered: [],
    };
    const result = await regenerate();
    expect(journalledWhileSending).toEqual(intent);
    const [call] = world.service.regenerates;
    expect(world.service.regenerates).toHaveLength(1);
    expect(call).toMatchObject({
      id: old.id,
      existingTokenExpiresAt: intent.existingTokenExpiresAt,
      newTokenExpiresAt: intent.newTokenExpiresAt,
    });
    const newId = call!.newId!;
    expect(result).toMatchObject({
      kind: 'staged',
      entry: {
        ...intent,
        rotationId: journalledWhileSending!.rotationId,
        phase: 'staged',
        staged: { newId, newExpiresAt: intent.newTokenExpiresAt, stagedAt: now },
      },
    });
    expect(result.secret.reveal()).toBe(world.service.token(newId)!.secret);
    const staged = await journal();
    expect(staged).toEqual(result.entry);
    if (staged?.phase !== 'staged') throw new Error('expected a staged entry');
    expect(staged.staged.secret, 'sealed with the state key, never plain').toHaveProperty('sealed');
    expect((openSecret(staged.staged.secret, stateKey, sealContext('ingest', newId)) as Secret).reveal()).toBe(result.secret.reveal());
    expect(run.process.steps).toEqual(['intent', 'regenerated', 'staged']);
    expect(ctx.stage).toBe('rotation');
    expect(ctx.orphans).toEqual([]);
  });

  it('each regenerate of a rotation has a fresh rotation id', async () => {
    const first = await due();
    const second = await due();
    const a = await first.regenerate();
    const b = await second.regenerate();
    expect(a.entry.rotationId).not.toBe(b.entry.rotationId);
  });

  it('a never-expiring old token is journalled as such', async () => {
    const { regenerate } = await due({ expiresInMs: null });
    expect((await regenerate()).entry.oldExpiresAt).toBeNull();
  });

  it('a staged entry the journal cannot take is delivered from memory, not lost: the secret comes back with the cause', async () => {
    const failure = new Error('disk full (injected)');
    const { world, regenerate } = await due({
      deps: (deps) => ({
        ...deps,
        journal: {
          ...deps.journal,
          read: (name) => deps.journal.read(name),
          erase: (name) => deps.journal.erase(name),
          describe: (name) => deps.journal.describe(name),
          write: async (entry) => {
            if (entry.phase === 'staged') throw failure;
            return deps.journal.write(entry);
          },
        },
      }),
    });
    const result = await regenerate();
    expect(result).toMatchObject({ kind: 'unjournalled', cause: failure, entry: { phase: 'staged' } });
    expect(result.secret.reveal()).toBe(world.service.token(world.service.regenerates[0]!.newId!)!.secret);
    expect(world.service.regenerates).toHaveLength(1);
  });
});

describe('as the CLI runs it, without failpoints', () => {
  it('regenerates and stages just the same', async () => {
    const { world, regenerate } = await due({ deps: (deps) => ({ ...deps, failpoint: undefined }) });
    expect(await regenerate()).toMatchObject({ kind: 'staged' });
    expect(world.service.regenerates).toHaveLength(1);
  });
});

describe('before anything is sent', () => {
  it('a stop asked before the intent is written leaves nothing behind and sends nothing', async () => {
    const { world, ctx, journal, regenerate } = await due();
    const stop = new AbortController();
    stop.abort();
    await expect(regenerate({ ...ctx, stopping: stop.signal })).rejects.toMatchObject({
      name: 'RotationStopped',
      message: expect.stringContaining('due (due), not rotated'),
    });
    expect(world.service.regenerates).toEqual([]);
    expect(await journal()).toBeUndefined();
  });

  it('a lost lock sends nothing and journals nothing: another holder would send its own regenerate', async () => {
    const { world, old, run, journal } = await due();
    const lost = new Error('lock lost (injected)');
    await expect(
      regenerateJournalled(rotationContext(old.policy, run, { lockLost: lost }), {
        token: await world.service.retrieve(old.id),
        reason: 'due',
        overlapMs: OVERLAP,
      }),
    ).rejects.toBe(lost);
    expect(world.service.regenerates).toEqual([]);
    expect(await journal()).toBeUndefined();
  });
});

describe('an answer that cannot be used', () => {
  it('a 200 with an unusable token field is an orphan, reported, the intent erased, and never sent again', async () => {
    const { world, old, ctx, journal, regenerate } = await due();
    world.service.onRegenerate({ kind: 'unusable-answer' });
    const error = await regenerate().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RegenerateAnswerUnusableError);
    expect(world.service.regenerates).toHaveLength(1);
    expect(world.service.committed()).toHaveLength(1);
    expect(ctx.orphans).toEqual([
      {
        name: 'ingest',
        oldId: old.id,
        regeneratedAt: world.clock.now().toISOString(),
        detectedAt: world.clock.now().toISOString(),
        oldTokenWorksUntil: world.at(OVERLAP).toISOString(),
      },
    ]);
    expect(await journal()).toBeUndefined();
  });

  it('through the protocol: the run fails with the unusable answer, names the orphan, sends one regenerate and leaks nothing', async () => {
    const world = openWorld();
    const { policy, id } = world.token('ingest');
    world.service.onRegenerate({ kind: 'unusable-answer' });
    const run = world.process();
    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    expect(outcome).toMatchObject({
      action: 'failed',
      error: { code: 'ERR_REGENERATE_ANSWER_UNUSABLE' },
      orphans: [{ name: 'ingest', oldId: id, oldTokenWorksUntil: world.at(policy.settings.overlapMs).toISOString() }],
    });
    expect(world.service.regenerates).toHaveLength(1);
    expect(await world.storage.open().journal.read('ingest')).toBeUndefined();
    expect(world.destinations.writes).toEqual([]);
    expectNoSecretIn(world.logs.text(), world.service);
  });

  it('an answer whose id cannot be used is held, sealed, in the journal, and the name stops there: one regenerate', async () => {
    const secret = new Secret('xaat-c4n4ry-held-00000000-0000');
    const untrackable: RegeneratedToken = { kind: 'untrackable', problem: 'its id is absent', secret };
    const { world, old, journal, stateKey, ctx } = await due({
      deps: (deps) => ({ ...deps, api: { retrieve: (id, o) => deps.api.retrieve(id, o), regenerate: async () => untrackable } }),
    });
    const error = await regenerateJournalled(ctx, {
      token: await world.service.retrieve(old.id),
      reason: 'due',
      overlapMs: OVERLAP,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SecretHeldError);
    // What the operator is told to do: where the secret is, until when the old token works, the command.
    const told = (error as Error).message;
    expect(told).toContain(ctx.deps.journal.describe('ingest'));
    expect(told).toContain('its id is absent');
    expect(told).toContain(world.at(OVERLAP).toISOString());
    expect(told).toContain('token-rotator rotate ingest --held-id ID');
    const held = await journal();
    expect(held).toMatchObject({
      phase: 'held',
      oldId: old.id,
      held: { problem: 'its id is absent', heldAt: world.clock.now().toISOString() },
    });
    if (held?.phase !== 'held') throw new Error('expected a held entry');
    expect((openSecret(held.held.secret, stateKey, heldSealContext('ingest', held.startedAt)) as Secret).reveal()).toBe(secret.reveal());
    expect(ctx.orphans).toEqual([]);
  });

  it('a held secret the journal cannot take is reported as an orphan, and the failure is what the caller sees', async () => {
    const failure = new Error('disk full (injected)');
    const untrackable: RegeneratedToken = { kind: 'untrackable', problem: 'its id is absent', secret: new Secret('xaat-c4n4ry-held-1') };
    const { old, ctx, regenerate, world } = await due({
      deps: (deps) => ({
        ...deps,
        api: { retrieve: (id, o) => deps.api.retrieve(id, o), regenerate: async () => untrackable },
        journal: {
          ...deps.journal,
          read: (name) => deps.journal.read(name),
          erase: (name) => deps.journal.erase(name),
          describe: (name) => deps.journal.describe(name),
          write: async (entry) => {
            if (entry.phase === 'held') throw failure;
            return deps.journal.write(entry);
          },
        },
      }),
    });
    await expect(regenerate()).rejects.toBe(failure);
    expect(ctx.orphans).toEqual([expect.objectContaining({ oldId: old.id, oldTokenWorksUntil: world.at(OVERLAP).toISOString() })]);
    expect(ctx.orphans[0]).not.toHaveProperty('newId');
  });

  it('an answer arriving after the lock was lost is reported as an orphan with its id, and not staged', async () => {
    const { world, old, run, journal } = await due();
    let held = true;
    const lost = new Error('lock lost (injected)');
    const ctx = {
      ...rotationContext(old.policy, run),
      lock: {
        assertHeld: async () => {
          if (!held) throw lost;
        },
      },
    };
    world.service.onRegenerate({ kind: 'answer', meanwhile: () => void (held = false) });
    await expect(
      regenerateJournalled(ctx, { token: await world.service.retrieve(old.id), reason: 'due', overlapMs: OVERLAP }),
    ).rejects.toBe(lost);
    const newId = world.service.regenerates[0]!.newId;
    expect(ctx.orphans).toEqual([expect.objectContaining({ oldId: old.id, newId, oldTokenWorksUntil: world.at(OVERLAP).toISOString() })]);
    expect(await journal(), 'the journal now belongs to the new holder: left as it was').toMatchObject({ phase: 'intent' });
    expect(world.service.regenerates).toHaveLength(1);
  });
});

describe('a regenerate whose outcome is unknown', () => {
  it('a definite refusal erases the intent and sends nothing more', async () => {
    const { world, ctx, journal, regenerate } = await due();
    world.service.onRegenerate({ kind: 'refuse', status: 403 });
    const error = await regenerate().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(403);
    expect(world.service.regenerates).toHaveLength(1);
    expect(await journal()).toBeUndefined();
    expect(ctx.orphans).toEqual([]);
  });

  it('lost before the service acted: reconciled as not applied, sent again once, with no orphan', async () => {
    const { world, old, ctx, regenerate } = await due();
    world.service.onRegenerate({ kind: 'unknown' });
    const result = await regenerate();
    expect(world.service.regenerates.map((r) => [r.id, r.committed])).toEqual([
      [old.id, false],
      [old.id, true],
    ]);
    expect(result).toMatchObject({ kind: 'staged', entry: { oldId: old.id, reason: 'due' } });
    expect(ctx.orphans).toEqual([]);
  });

  it('lost after the service acted: an orphan reported, and regenerated again from the old token, which still works', async () => {
    const { world, old, ctx, regenerate } = await due();
    world.service.onRegenerate({ kind: 'lose-answer' });
    const result = await regenerate();
    const [lost, again] = world.service.regenerates;
    expect(world.service.regenerates).toHaveLength(2);
    expect(again).toMatchObject({ id: old.id, committed: true });
    expect(result).toMatchObject({
      kind: 'staged',
      entry: { oldId: old.id, reason: 'the secret of the previous regenerate was lost; due', staged: { newId: again!.newId } },
    });
    expect(ctx.orphans).toEqual([expect.objectContaining({ oldId: old.id })]);
    expect(lost!.newId).not.toBe(again!.newId);
  });

  it('lost after the service acted, and the old token already stopped: an orphan with nothing to rotate from, no second regenerate', async () => {
    const { world, ctx, journal } = await due();
    world.service.onRegenerate({ kind: 'lose-answer' });
    const token = await world.service.retrieve(ctx.policy.id);
    // Overlap 0: the service ends the old token at once.
    const error = await regenerateJournalled(ctx, { token, reason: 'due', overlapMs: 0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OrphanedTokenError);
    expect(world.service.regenerates).toHaveLength(1);
    expect(ctx.orphans).toHaveLength(1);
    expect(await journal()).toBeUndefined();
  });

  it('never more than three sends in a run: the third unknown outcome is what the caller sees', async () => {
    const { world, journal, regenerate } = await due();
    world.service.onRegenerate({ kind: 'unknown' }, { kind: 'unknown' }, { kind: 'unknown' }, { kind: 'unknown' });
    const error = await regenerate().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RegenerateOutcomeUnknownError);
    expect(world.service.regenerates).toHaveLength(3);
    expect(await journal()).toBeUndefined();
  });

  it('a failed reconcile keeps the intent journalled for the next run, and sends nothing more', async () => {
    const { world, old, journal, regenerate } = await due();
    world.service.onRegenerate({ kind: 'unknown', meanwhile: () => void world.service.onRetrieve({ id: old.id, status: 503 }) });
    await expect(regenerate()).rejects.toMatchObject({ status: 503 });
    expect(world.service.regenerates).toHaveLength(1);
    expect(await journal()).toMatchObject({ phase: 'intent', oldId: old.id });
  });
});

import { describe, expect, it } from 'vitest';

import { endEarlierTokens } from '../../src/rotation/end-earlier-tokens.js';
import { STATE_VERSION, type StateRecord } from '../../src/state/state-record.js';
import { DAY, HOUR, openWorld } from '../fakes/fake-deps.js';
import type { RegenerateScript } from '../fakes/fake-token-service.js';
import { rotationContext, stoppedAt } from '../fakes/rotation-context.js';

/*
 * After an emergency rotation, every token the name replaced earlier that still works past the
 * deadline is ended (by a regenerate whose throwaway dies within a minute), or named as still alive
 * with when it stops. A token reported `ended` must really be ended: a leaked credential hides there.
 */

const MINUTE = 60_000;

/**
 * A name whose current token was just replaced in an emergency, with earlier tokens in its lineage:
 * each with the expiry the service knows (`null`: never expires) and the one the state recorded.
 */
function emergency(earlier: Array<{ serviceExpiresInMs: number | null; recordedExpiresInMs?: number | null }>, deadlineInMs = 0) {
  const world = openWorld();
  const current = world.token('ingest');
  const tokens = earlier.map((e) =>
    world.service.add({ name: 'ingest', expiresAt: e.serviceExpiresInMs === null ? null : world.at(e.serviceExpiresInMs) }),
  );
  const record: StateRecord = {
    version: STATE_VERSION,
    name: 'ingest',
    currentId: current.id,
    expiresAt: world.at(30 * DAY).toISOString(),
    adoptedId: tokens[0]?.id ?? current.id,
    adoptedAt: world.at(-30 * DAY).toISOString(),
    lastRotatedAt: world.clock.now().toISOString(),
    consecutiveFailures: 0,
    lastFailure: null,
    serviceClock: null,
    lineage: earlier.map((e, i) => {
      const recorded = e.recordedExpiresInMs === undefined ? e.serviceExpiresInMs : e.recordedExpiresInMs;
      return {
        id: tokens[i]!.id,
        replacedAt: world.at(-DAY).toISOString(),
        expiresAt: recorded === null ? null : world.at(recorded).toISOString(),
      };
    }),
  };
  const run = world.process();
  const ctx = rotationContext(current.policy, run);
  const deadline = world.at(deadlineInMs);
  /** Ends them under a stop that comes at the given call to the service. */
  const endStoppedAt = (at: Parameters<typeof stoppedAt>[2]) => {
    const stop = new AbortController();
    const deps = { ...run, api: stoppedAt(run.api, stop, at) };
    return endEarlierTokens({ ...rotationContext(current.policy, deps), signal: stop.signal }, record, deadline);
  };
  return {
    world,
    run,
    record,
    deadline,
    ids: tokens.map((t) => t.id),
    secrets: tokens.map((t) => t.secret),
    end: () => endEarlierTokens(ctx, record, deadline),
    endStoppedAt,
    stored: async () => (await world.storage.open().state.read('ingest'))?.lineage,
  };
}

/** The regenerate that ends an earlier token fails without an answer; then `lookup` is what its retrieve meets. */
function unknownEnd(world: ReturnType<typeof openWorld>, id: string, script: Partial<RegenerateScript> = {}): void {
  world.service.onRegenerate({ kind: 'unknown', id, ...script } as RegenerateScript);
}

describe('which earlier tokens are looked at', () => {
  it('an earlier token inside its overlap is ended by one regenerate whose throwaway dies within a minute', async () => {
    const { world, end, ids, deadline, stored } = emergency([{ serviceExpiresInMs: HOUR }]);
    expect(await end()).toEqual([{ id: ids[0], result: 'ended', expiresAt: deadline.toISOString() }]);
    expect(world.service.regenerates).toEqual([
      expect.objectContaining({
        id: ids[0],
        existingTokenExpiresAt: deadline.toISOString(),
        newTokenExpiresAt: world.at(MINUTE).toISOString(),
        committed: true,
      }),
    ]);
    expect(await stored()).toEqual([expect.objectContaining({ id: ids[0], expiresAt: deadline.toISOString() })]);
  });

  it('a never-expiring earlier token is ended too: it would otherwise work forever', async () => {
    const { world, end, ids, secrets, deadline, stored } = emergency([{ serviceExpiresInMs: null }]);
    expect(await end()).toEqual([{ id: ids[0], result: 'ended', expiresAt: deadline.toISOString() }]);
    expect(world.service.committed(ids[0])).toHaveLength(1);
    expect(world.service.works(secrets[0])).toBe(false);
    expect(await stored()).toEqual([expect.objectContaining({ id: ids[0], expiresAt: deadline.toISOString() })]);
  });

  it('an earlier token recorded as stopping by the deadline (at it exactly, or before) is left alone: nothing asked, nothing written', async () => {
    const { world, end, stored } = emergency([{ serviceExpiresInMs: 10 * MINUTE }, { serviceExpiresInMs: 5 * MINUTE }], 10 * MINUTE);
    expect(await end()).toEqual([]);
    expect(world.service.retrieves).toEqual([]);
    expect(world.service.regenerates).toEqual([]);
    expect(await stored()).toBeUndefined();
  });

  it('only the tokens recorded as outliving the deadline are looked at, and only their lineage entries change', async () => {
    const { world, end, ids, deadline, record, stored } = emergency([{ serviceExpiresInMs: HOUR }, { serviceExpiresInMs: -HOUR }]);
    expect(await end()).toEqual([{ id: ids[0], result: 'ended', expiresAt: deadline.toISOString() }]);
    expect(world.service.retrieves).toEqual([ids[0]]);
    expect(await stored()).toEqual([{ ...record.lineage[0], expiresAt: deadline.toISOString() }, record.lineage[1]]);
  });

  it('the current token, should the lineage name it, is never ended', async () => {
    const { world, end, record } = emergency([]);
    record.lineage.push({ id: record.currentId, replacedAt: world.clock.now().toISOString(), expiresAt: null });
    expect(await end()).toEqual([]);
    expect(world.service.regenerates).toEqual([]);
  });
});

describe('what the service says about each', () => {
  it('a token the service no longer knows is gone, and recorded as never working again', async () => {
    const { world, end, ids, stored } = emergency([{ serviceExpiresInMs: HOUR }]);
    world.service.onRetrieve({ id: ids[0], status: 404 });
    expect(await end()).toEqual([{ id: ids[0], result: 'gone', expiresAt: null }]);
    expect(world.service.regenerates).toEqual([]);
    expect(await stored()).toEqual([expect.objectContaining({ id: ids[0], expiresAt: null })]);
  });

  it('a token that cannot be looked up is still alive until its recorded expiry: never reported as ended or gone', async () => {
    const { world, end, ids, stored } = emergency([{ serviceExpiresInMs: HOUR, recordedExpiresInMs: 2 * HOUR }]);
    world.service.onRetrieve({ id: ids[0], status: 503 });
    const recorded = world.at(2 * HOUR).toISOString();
    expect(await end()).toEqual([{ id: ids[0], result: 'still-alive', expiresAt: recorded, error: expect.stringContaining('503') }]);
    expect(world.service.regenerates).toEqual([]);
    expect(await stored(), 'what the state knew of it is kept, not turned into "never expires"').toEqual([
      expect.objectContaining({ id: ids[0], expiresAt: recorded }),
    ]);
  });

  it('a token the service already ends by the deadline (at it exactly, or before) is already ended: no throwaway minted', async () => {
    const { world, end, ids } = emergency(
      [
        { serviceExpiresInMs: 10 * MINUTE, recordedExpiresInMs: DAY },
        { serviceExpiresInMs: 5 * MINUTE, recordedExpiresInMs: DAY },
      ],
      10 * MINUTE,
    );
    expect(await end()).toEqual([
      { id: ids[0], result: 'already-ended', expiresAt: world.at(10 * MINUTE).toISOString() },
      { id: ids[1], result: 'already-ended', expiresAt: world.at(5 * MINUTE).toISOString() },
    ]);
    expect(world.service.regenerates).toEqual([]);
  });

  it('a token the service refuses to end is still alive until its own expiry', async () => {
    const { world, end, ids } = emergency([{ serviceExpiresInMs: HOUR }]);
    world.service.onRegenerate({ kind: 'refuse', status: 403, id: ids[0] });
    expect(await end()).toEqual([
      { id: ids[0], result: 'still-alive', expiresAt: world.at(HOUR).toISOString(), error: expect.stringContaining('403') },
    ]);
    expect(world.service.regenerates).toHaveLength(1);
    expect(world.service.retrieves, 'a refusal is an answer: the token is not looked up again').toEqual([ids[0]]);
  });
});

describe('under a stop at the deadline', () => {
  it('a lookup still waiting is given up: the token is named still alive, and no end is sent', async () => {
    const { world, endStoppedAt, ids } = emergency([{ serviceExpiresInMs: HOUR }]);
    expect(await endStoppedAt({ op: 'retrieve', call: 1 })).toEqual([
      { id: ids[0], result: 'still-alive', expiresAt: world.at(HOUR).toISOString(), error: expect.stringContaining('deadline') },
    ]);
    expect(world.service.regenerates).toEqual([]);
  });

  it('an end still waiting is given up: the token is named still alive until its own expiry', async () => {
    const { world, endStoppedAt, ids } = emergency([{ serviceExpiresInMs: HOUR }]);
    expect(await endStoppedAt({ op: 'regenerate', call: 1 })).toEqual([
      { id: ids[0], result: 'still-alive', expiresAt: world.at(HOUR).toISOString(), error: expect.stringContaining('deadline') },
    ]);
    expect(world.service.regenerates).toEqual([]);
  });

  it('the lookup after an end whose answer was lost is given up: still alive, never assumed ended', async () => {
    const { world, endStoppedAt, ids } = emergency([{ serviceExpiresInMs: HOUR }], 10 * MINUTE);
    world.service.onRegenerate({ kind: 'lose-answer', id: ids[0] });
    expect(await endStoppedAt({ op: 'retrieve', call: 2 })).toEqual([
      { id: ids[0], result: 'still-alive', expiresAt: world.at(HOUR).toISOString(), error: expect.any(String) },
    ]);
    expect(world.service.committed(ids[0])).toHaveLength(1);
  });
});

describe('after an end whose answer was lost', () => {
  it('the token gone since (ended at once) is ended', async () => {
    const { world, end, ids, deadline } = emergency([{ serviceExpiresInMs: HOUR }]);
    world.service.onRegenerate({ kind: 'lose-answer', id: ids[0] });
    expect(await end()).toEqual([{ id: ids[0], result: 'ended', expiresAt: deadline.toISOString() }]);
    expect(world.service.regenerates).toHaveLength(1);
  });

  it('the token now stopping at the deadline (the end took effect) is ended at the expiry the service gives', async () => {
    const { world, end, ids, deadline } = emergency([{ serviceExpiresInMs: HOUR }], 10 * MINUTE);
    world.service.onRegenerate({ kind: 'lose-answer', id: ids[0] });
    expect(await end()).toEqual([{ id: ids[0], result: 'ended', expiresAt: deadline.toISOString() }]);
    expect(world.service.regenerates).toHaveLength(1);
  });

  it('an expiry up to a second past the deadline (service rounding) still counts as ended; more does not', async () => {
    const { world, end, ids } = emergency([{ serviceExpiresInMs: HOUR }, { serviceExpiresInMs: HOUR }], 10 * MINUTE);
    const endedAt = (id: string, ms: number) =>
      unknownEnd(world, id, {
        meanwhile: () => {
          world.service.token(id)!.expiresAt = world.at(ms);
        },
      });
    endedAt(ids[0]!, 10 * MINUTE + 1000);
    endedAt(ids[1]!, 10 * MINUTE + 1001);
    expect(await end()).toEqual([
      { id: ids[0], result: 'ended', expiresAt: world.at(10 * MINUTE + 1000).toISOString() },
      { id: ids[1], result: 'still-alive', expiresAt: world.at(10 * MINUTE + 1001).toISOString(), error: expect.any(String) },
    ]);
  });

  it('a token whose lookup fails is still alive, whatever the failure: only a 404 means it ended', async () => {
    const { world, end, ids } = emergency([{ serviceExpiresInMs: HOUR }, { serviceExpiresInMs: HOUR }]);
    for (const [id, status] of [
      [ids[0]!, 503],
      [ids[1]!, 403],
    ] as const) {
      unknownEnd(world, id, { meanwhile: () => void world.service.onRetrieve({ id, status }) });
    }
    expect(await end()).toEqual([
      { id: ids[0], result: 'still-alive', expiresAt: world.at(HOUR).toISOString(), error: expect.any(String) },
      { id: ids[1], result: 'still-alive', expiresAt: world.at(HOUR).toISOString(), error: expect.any(String) },
    ]);
    expect(world.service.regenerates).toHaveLength(2);
  });

  it('a token the end did not reach is still alive, with the expiry the service gives now', async () => {
    const { world, end, ids } = emergency([{ serviceExpiresInMs: HOUR }, { serviceExpiresInMs: null }]);
    unknownEnd(world, ids[0]!, {
      meanwhile: () => {
        world.service.token(ids[0]!)!.expiresAt = world.at(2 * HOUR);
      },
    });
    unknownEnd(world, ids[1]!);
    expect(await end()).toEqual([
      { id: ids[0], result: 'still-alive', expiresAt: world.at(2 * HOUR).toISOString(), error: expect.any(String) },
      { id: ids[1], result: 'still-alive', expiresAt: null, error: expect.any(String) },
    ]);
  });
});

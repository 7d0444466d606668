import { describe, expect, it } from 'vitest';

import type { Policy, TokenPolicy } from '../../src/config/types.js';
import { ApiError } from '../../src/errors.js';
import { planAll } from '../../src/rotation/plan.js';
import { rotateToken } from '../../src/rotation/rotate-token.js';
import { JOURNAL_VERSION, type JournalEntry } from '../../src/state/journal-entry.js';
import { DAY, openWorld, type World } from '../fakes/fake-deps.js';

const policyOf = (...tokens: TokenPolicy[]): Policy => ({ file: '/policy.yaml', tokens, notifications: [], warnings: [] });

/** What the plan changed: it must change nothing. */
function snapshot(world: World, names: string[]) {
  return {
    regenerates: world.service.regenerates.length,
    writes: world.destinations.writes.length,
    state: names.map((n) => world.storage.readRaw('state', n)),
    journal: names.map((n) => world.storage.readRaw('journal', n)),
  };
}

/** The token's secret put in each of its sinks, as a first run finds them. */
function seeded<T extends { secret: string; policy: TokenPolicy }>(world: World, token: T): T {
  for (const sink of token.policy.sinks) world.destinations.put((sink as unknown as { key: string }).key, token.secret);
  return token;
}

const intentOf = (name: string, oldId: string, startedAt: string): JournalEntry => ({
  version: JOURNAL_VERSION,
  name,
  rotationId: `${name}-r`,
  phase: 'intent',
  reason: 'due',
  startedAt,
  oldId,
  oldExpiresAt: '2026-11-23T12:00:00.000Z',
  existingTokenExpiresAt: '2026-11-22T13:00:00.000Z',
  newTokenExpiresAt: null,
  delivered: [],
});

describe('plan: the decisions `once` would take now, with nothing written anywhere', () => {
  it('a name not due is skipped, with its id, expiry and when it becomes due; a due one is to be rotated', async () => {
    const world = openWorld();
    const calm = world.token('calm', { expiresInMs: 60 * DAY });
    const due = world.token('due', { expiresInMs: DAY });
    for (const t of [calm, due]) seeded(world, t);
    const before = snapshot(world, ['calm', 'due']);

    const entries = await planAll(policyOf(calm.policy, due.policy), world.process(), { concurrency: 2 });

    expect(entries).toEqual([
      {
        name: 'calm',
        id: calm.id,
        expiresAt: world.at(60 * DAY).toISOString(),
        action: 'skip',
        reason: expect.any(String),
        dueAt: world.at(53 * DAY).toISOString(),
      },
      {
        name: 'due',
        id: due.id,
        expiresAt: world.at(DAY).toISOString(),
        action: 'rotate',
        reason: expect.stringContaining('renewBefore'),
        dueAt: world.at(DAY - 7 * DAY).toISOString(),
      },
    ]);
    expect(snapshot(world, ['calm', 'due']), 'nothing regenerated, delivered or written').toEqual(before);
  });

  it('a token that never expires: no expiry, and due at maxAge from first sight', async () => {
    const world = openWorld();
    const forever = seeded(world, world.token('forever', { expiresInMs: null }));
    const [entry] = await planAll(policyOf(forever.policy), world.process(), { concurrency: 1 });
    expect(entry).toMatchObject({ action: 'skip', expiresAt: null, dueAt: world.at(90 * DAY).toISOString() });
  });

  it('sinks that lack the current secret are listed as drift; a name with none has no drift field', async () => {
    const world = openWorld();
    const token = world.token('ingest', { expiresInMs: 60 * DAY });
    expect(await rotateToken(token.policy, world.process(), { lockWaitMs: 0 })).toMatchObject({ action: 'rotated' });
    const settled = await planAll(policyOf(token.policy), world.process(), { concurrency: 1 });
    expect(settled[0]).toMatchObject({ action: 'skip' });
    expect(settled[0]).not.toHaveProperty('drift');

    world.destinations.lose('ingest-b');
    const before = snapshot(world, ['ingest']);
    const [entry] = await planAll(policyOf(token.policy), world.process(), { concurrency: 1 });
    expect(entry).toMatchObject({
      action: 'redeliver',
      drift: [{ target: 'memory:ingest-b', sink: 'memory ingest-b', kind: 'missing' }],
    });
    expect(snapshot(world, ['ingest']), 'the sink is not repaired by a plan').toEqual(before);
  });

  it('a staged rotation will be finished first, without regenerating: the old id and expiry, and the staged token named', async () => {
    const world = openWorld();
    const token = world.token('ingest', { expiresInMs: DAY });
    const crashed = world.process({ crashAt: { step: 'staged' } });
    await expect(rotateToken(token.policy, crashed, { lockWaitMs: 0 })).rejects.toThrow(/simulated crash/);
    world.storage.crash(crashed.view);
    const newId = world.service.committed()[0]!.newId!;

    const [entry] = await planAll(policyOf(token.policy), world.process(), { concurrency: 1 });
    expect(entry).toEqual({
      name: 'ingest',
      id: token.id,
      expiresAt: world.at(DAY).toISOString(),
      action: 'rotate',
      reason: expect.stringContaining(`deliver the staged secret of ${newId} without regenerating`),
      dueAt: null,
    });
    expect(world.service.committed(), 'no regenerate').toHaveLength(1);
  });

  it('an intent whose outcome is unknown will be reconciled first', async () => {
    const world = openWorld();
    const token = world.token('ingest', { expiresInMs: DAY });
    const crashed = world.process({ crashAt: { step: 'intent' } });
    await expect(rotateToken(token.policy, crashed, { lockWaitMs: 0 })).rejects.toThrow(/simulated crash/);

    const [entry] = await planAll(policyOf(token.policy), world.process(), { concurrency: 1 });
    expect(entry).toMatchObject({ id: token.id, action: 'rotate', dueAt: null, reason: expect.stringContaining('reconcile') });
    expect(entry!.reason).not.toContain('staged');
  });

  it('an intent the state already records as committed is not unfinished: the name is checked as usual', async () => {
    const world = openWorld();
    const token = world.token('ingest', { expiresInMs: DAY });
    const run = world.process();
    await rotateToken(token.policy, run, { lockWaitMs: 0 });
    const record = (await run.view.state.read('ingest'))!;
    const replaced = record.lineage.find((l) => l.id === token.id)!;
    await run.view.journal.write(intentOf('ingest', token.id, replaced.replacedAt));

    const [entry] = await planAll(policyOf(token.policy), world.process(), { concurrency: 1 });
    expect(entry).toMatchObject({ id: record.currentId, action: 'skip' });
  });

  it('a held secret stops the name until an operator deals with it: an error naming where it is held and why', async () => {
    const world = openWorld();
    const token = world.token('ingest', { expiresInMs: DAY });
    const view = world.storage.open();
    await view.journal.write({
      ...intentOf('ingest', token.id, world.at(-3600_000).toISOString()),
      phase: 'held',
      held: { problem: 'the answer had no token id', heldAt: world.at(-3600_000).toISOString(), secret: { plain: 'xaat-c4n4ry-held' } },
    });
    const [entry] = await planAll(policyOf(token.policy), world.process(), { concurrency: 1 });
    expect(entry).toEqual({
      name: 'ingest',
      id: token.id,
      expiresAt: '2026-11-23T12:00:00.000Z',
      action: 'error',
      reason: expect.stringContaining('the answer had no token id'),
      dueAt: null,
    });
    expect(entry!.reason).toContain(view.journal.describe('ingest'));
  });

  it('a journal entry planted for another lineage is an error for that name, and the others are planned', async () => {
    const world = openWorld();
    const planted = world.token('planted', { expiresInMs: DAY });
    const calm = seeded(world, world.token('calm', { expiresInMs: 60 * DAY }));
    await world.storage.open().journal.write(intentOf('planted', 'someone-elses', world.at(0).toISOString()));
    const entries = await planAll(policyOf(planted.policy, calm.policy), world.process(), { concurrency: 1 });
    expect(entries).toEqual([
      {
        name: 'planted',
        id: planted.id,
        expiresAt: null,
        action: 'error',
        reason: expect.stringContaining("not in this name's lineage"),
        dueAt: null,
      },
      expect.objectContaining({ name: 'calm', action: 'skip' }),
    ]);
  });

  it('a name the service cannot answer for is an error with the service’s message; the others are planned', async () => {
    const world = openWorld();
    const down = world.token('down', { expiresInMs: 60 * DAY });
    const calm = seeded(world, world.token('calm', { expiresInMs: 60 * DAY }));
    world.service.onRetrieve({ id: down.id, status: 503 });
    const entries = await planAll(policyOf(down.policy, calm.policy), world.process(), { concurrency: 1 });
    expect(entries[0]).toEqual({
      name: 'down',
      id: down.id,
      expiresAt: null,
      action: 'error',
      reason: expect.stringContaining('503'),
      dueAt: null,
      status: 503,
    });
    expect(entries[1]).toMatchObject({ name: 'calm', action: 'skip' });
  });

  it('a service every token needs being down is a warning per name, not an error: the error is one shared problem', async () => {
    const world = openWorld();
    const down = world.token('down', { expiresInMs: 60 * DAY });
    const broken = world.token('broken', { expiresInMs: 60 * DAY });
    const deps = world.process();
    const shared = new ApiError('retrieve: connection refused', {
      op: 'retrieve',
      dependencyFailure: { dependency: 'token service', kind: 'connection-refused', target: 'https://tokens.example', check: 'is it up?' },
    });
    const api = {
      ...deps.api,
      retrieve: async (id: string) => {
        if (id === down.id) throw shared;
        throw new ApiError('retrieve: 500', { op: 'retrieve', status: 500 });
      },
    };
    const entries = await planAll(policyOf(down.policy, broken.policy), { ...deps, api }, { concurrency: 1 });
    expect(entries.map((e) => [e.name, e.action])).toEqual([
      ['down', 'error'],
      ['broken', 'error'],
    ]);
    const levels = world.logs.lines
      .map((l) => JSON.parse(l) as { level: string; tokenName?: string })
      .filter((l) => l.level === 'warn' || l.level === 'error')
      .map((l) => [l.tokenName, l.level]);
    expect(levels).toEqual([
      ['down', 'warn'],
      ['broken', 'error'],
    ]);
  });

  it('unfinished rotations of names no longer in the policy come last, as errors with no id', async () => {
    const world = openWorld();
    const calm = world.token('calm', { expiresInMs: 60 * DAY });
    await world.storage.open().journal.write(intentOf('gone', 'tok-gone', world.at(0).toISOString()));
    const entries = await planAll(policyOf(calm.policy), world.process(), { concurrency: 1 });
    expect(entries).toEqual([
      expect.objectContaining({ name: 'calm' }),
      { name: 'gone', id: '-', expiresAt: null, action: 'error', reason: expect.stringContaining('no longer in the policy'), dueAt: null },
    ]);
  });

  it('checks at most `concurrency` names at once', async () => {
    const world = openWorld();
    const tokens = [0, 1, 2, 3].map((i) => world.token(`t${i}`, { expiresInMs: 60 * DAY }));
    const deps = world.process();
    let inFlight = 0;
    let most = 0;
    const api = {
      ...deps.api,
      retrieve: async (...args: Parameters<typeof deps.api.retrieve>) => {
        most = Math.max(most, ++inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        inFlight--;
        return world.service.retrieve(args[0]);
      },
    };
    await planAll(policyOf(...tokens.map((t) => t.policy)), { ...deps, api }, { concurrency: 2 });
    expect(most).toBe(2);
  });
});

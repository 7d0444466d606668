import { describe, expect, it } from 'vitest';

import type { Policy, TokenPolicy } from '../../src/config/types.js';
import { StateError } from '../../src/errors.js';
import { needsAttention } from '../../src/rotation/outcome.js';
import { runOnce } from '../../src/rotation/run-once.js';
import { JOURNAL_VERSION } from '../../src/state/journal-entry.js';
import { DAY, type FakeDeps, openWorld, type World } from '../fakes/fake-deps.js';
import { manualTimers } from '../fakes/manual-timers.js';

const policyOf = (...tokens: TokenPolicy[]): Policy => ({ file: '/policy.yaml', tokens, notifications: [], warnings: [] });

function seeded<T extends { secret: string; policy: TokenPolicy }>(world: World, token: T): T {
  for (const sink of token.policy.sinks) world.destinations.put((sink as unknown as { key: string }).key, token.secret);
  return token;
}

/** Deps whose retrieve runs `before` first, with the id asked for: where a test plays what happens mid-pass. */
function onRetrieve(deps: FakeDeps, before: (id: string) => void): FakeDeps {
  const retrieve = deps.api.retrieve.bind(deps.api);
  return { ...deps, api: { ...deps.api, retrieve: (id, options) => (before(id), retrieve(id, options)) } };
}

describe('once: one pass over every token', () => {
  it('each name gets its own outcome, in policy order; one failing does not stop the others', async () => {
    const world = openWorld();
    const due = seeded(world, world.token('due', { expiresInMs: DAY }));
    const down = world.token('down', { expiresInMs: 60 * DAY });
    const calm = seeded(world, world.token('calm', { expiresInMs: 60 * DAY }));
    world.service.onRetrieve({ id: down.id, status: 503, times: 10 });

    const outcomes = await runOnce(policyOf(due.policy, down.policy, calm.policy), world.process(), { concurrency: 2 });

    expect(outcomes.map((o) => [o.name, o.action])).toEqual([
      ['due', 'rotated'],
      ['down', 'failed'],
      ['calm', 'skipped'],
    ]);
    expect(world.service.committed(due.id)).toHaveLength(1);
    expect(world.service.regenerates).toHaveLength(1);
    expect(outcomes.map(needsAttention), 'the failure makes `once` exit 1').toEqual([false, true, false]);
  });

  it('a stop asked before the pass starts: no name is checked, nothing is sent, and nothing counts as failed', async () => {
    const world = openWorld();
    const tokens = [0, 1].map((i) => seeded(world, world.token(`t${i}`, { expiresInMs: DAY })));
    const stopping = new AbortController();
    stopping.abort();
    const outcomes = await runOnce(policyOf(...tokens.map((t) => t.policy)), world.process(), {
      concurrency: 1,
      stopping: stopping.signal,
    });
    expect(outcomes).toEqual(
      tokens.map((t) => ({
        name: t.policy.name,
        action: 'interrupted',
        stage: 'check',
        reason: expect.stringContaining('stopped before it got to this token'),
        oldId: t.id,
        expiresAt: null,
        sinks: [],
        orphans: [],
      })),
    );
    expect(world.service.retrieves).toEqual([]);
    expect(world.service.regenerates).toEqual([]);
    expect(outcomes.some(needsAttention)).toBe(false);
    for (const t of tokens) expect(world.storage.readRaw('state', t.policy.name), 'no record written').toBeUndefined();
  });

  it('a stop asked while the first name is checked, before its regenerate: no regenerate is sent, the others never start', async () => {
    const world = openWorld();
    const tokens = [0, 1, 2].map((i) => seeded(world, world.token(`t${i}`, { expiresInMs: DAY })));
    const stopping = new AbortController();
    const deps = onRetrieve(world.process(), () => stopping.abort());
    const outcomes = await runOnce(policyOf(...tokens.map((t) => t.policy)), deps, { concurrency: 1, stopping: stopping.signal });

    expect(world.service.regenerates, 'no regenerate after the stop').toEqual([]);
    expect(world.service.retrieves).toEqual([tokens[0]!.id]);
    const told = world.logs.lines.map((l) => JSON.parse(l) as { level: string; notStarted?: string[] }).filter((l) => l.notStarted);
    expect(
      told.map((l) => [l.level, l.notStarted]),
      'the operator is told which names were not checked',
    ).toEqual([['warn', ['t1', 't2']]]);
    expect(outcomes.map((o) => [o.name, o.action, o.stage])).toEqual([
      ['t0', 'interrupted', 'check'],
      ['t1', 'interrupted', 'check'],
      ['t2', 'interrupted', 'check'],
    ]);
    expect(outcomes.some(needsAttention)).toBe(false);
  });

  it('a stop asked once a regenerate was sent: that name finishes its rotation, the names after it never start', async () => {
    const world = openWorld();
    const tokens = [0, 1, 2].map((i) => seeded(world, world.token(`t${i}`, { expiresInMs: DAY })));
    const stopping = new AbortController();
    world.service.onRegenerate({ kind: 'answer', meanwhile: () => stopping.abort() });
    const outcomes = await runOnce(policyOf(...tokens.map((t) => t.policy)), world.process(), {
      concurrency: 1,
      stopping: stopping.signal,
    });

    expect(world.service.regenerates).toHaveLength(1);
    expect(outcomes.map((o) => [o.name, o.action])).toEqual([
      ['t0', 'rotated'],
      ['t1', 'interrupted'],
      ['t2', 'interrupted'],
    ]);
    const newSecret = world.service.token(world.service.committed()[0]!.newId!)!.secret;
    expect(world.destinations.secret('t0-a')).toBe(newSecret);
    expect(world.destinations.secret('t0-b')).toBe(newSecret);
    expect(world.service.retrieves, 'the names not started were not even checked').not.toContain(tokens[1]!.id);
  });

  it('reports its progress while it lasts: done, total and the names in progress, and stops reporting with the pass', async () => {
    const world = openWorld();
    const tokens = [0, 1].map((i) => seeded(world, world.token(`t${i}`, { expiresInMs: 60 * DAY })));
    const { timers, armed } = manualTimers();
    const fired: Array<{ done: number; total: number; inProgress: string[] }> = [];
    const deps = onRetrieve(world.process(), () => armed.at(-1)!.callback());
    const outcomes = await runOnce(policyOf(...tokens.map((t) => t.policy)), deps, { concurrency: 1, timers });
    for (const line of world.logs.lines) {
      const parsed = JSON.parse(line) as { done?: number; total?: number; inProgress?: string[] };
      if (parsed.total !== undefined && parsed.inProgress)
        fired.push({ done: parsed.done!, total: parsed.total, inProgress: parsed.inProgress });
    }
    expect(outcomes.map((o) => o.action)).toEqual(['skipped', 'skipped']);
    expect(
      world.logs.lines.filter((l) => l.includes('"notStarted"')),
      'a pass not stopped leaves nothing unchecked',
    ).toEqual([]);
    expect(fired).toEqual([
      { done: 0, total: 2, inProgress: ['t0'] },
      { done: 1, total: 2, inProgress: ['t1'] },
    ]);
    expect(armed.at(-1)!.cleared, 'no line after the pass').toBe(true);
  });

  it('a name that was not started is not counted as checked in the progress', async () => {
    const world = openWorld();
    const tokens = [0, 1, 2].map((i) => seeded(world, world.token(`t${i}`, { expiresInMs: 60 * DAY })));
    const { timers, armed } = manualTimers();
    const stopping = new AbortController();
    const seen: number[] = [];
    let checks = 0;
    const deps = onRetrieve(world.process(), () => {
      armed.at(-1)!.callback();
      if (++checks === 1) stopping.abort();
    });
    await runOnce(policyOf(...tokens.map((t) => t.policy)), deps, { concurrency: 1, timers, stopping: stopping.signal });
    for (const line of world.logs.lines) {
      const parsed = JSON.parse(line) as { done?: number; total?: number };
      if (parsed.total === 3 && parsed.done !== undefined) seen.push(parsed.done);
    }
    expect(seen).toEqual([0]);
    expect(armed.at(-1)!.cleared).toBe(true);
  });

  it('unfinished rotations of names no longer in the policy are failures of their own, after the policy’s names', async () => {
    const world = openWorld();
    const calm = seeded(world, world.token('calm', { expiresInMs: 60 * DAY }));
    await world.storage.open().journal.write({
      version: JOURNAL_VERSION,
      name: 'gone',
      rotationId: 'gone-r',
      phase: 'intent',
      reason: 'due',
      startedAt: world.at(0).toISOString(),
      oldId: 'tok-gone',
      oldExpiresAt: null,
      existingTokenExpiresAt: world.at(3600_000).toISOString(),
      newTokenExpiresAt: null,
      delivered: [],
    });
    const outcomes = await runOnce(policyOf(calm.policy), world.process(), { concurrency: 1 });
    expect(outcomes).toHaveLength(2);
    const [, stray] = outcomes;
    expect(stray).toEqual({
      name: 'gone',
      action: 'failed',
      reason: expect.stringContaining('no longer in the policy'),
      oldId: '-',
      expiresAt: null,
      sinks: [],
      orphans: [],
      error: { code: StateError.code, message: stray!.reason },
    });
    expect(needsAttention(stray!), 'a stray makes `once` exit 1').toBe(true);
    expect(world.storage.readRaw('journal', 'gone'), 'left for an operator').toBeDefined();
  });
});

import { describe, expect, it } from 'vitest';

import { reloadBatch } from '../../src/daemon/reload-batch.js';
import type { RotatedItem } from '../../src/reload/run-reloads.js';
import type { TokenOutcome } from '../../src/rotation/outcome.js';
import { testPolicy } from '../fakes/fake-deps.js';

const outcome = (name: string): TokenOutcome => ({
  name,
  action: 'rotated',
  reason: 'due',
  oldId: 'old',
  expiresAt: null,
  newId: 'new',
  rotationId: `${name}-r`,
  rotatedAt: '2026-11-22T10:00:00.000Z',
  sinks: [],
  orphans: [],
});
const item = (name: string): RotatedItem => ({ token: testPolicy({ name, id: 'old', sinks: [] }), outcome: outcome(name) });

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('the daemon batches reloads like a run of once', () => {
  it('reloads rotations committed by checks running together in one batch, after the last of them', async () => {
    const batches: string[][] = [];
    const done: string[] = [];
    const batch = reloadBatch(
      async (items) => {
        batches.push(items.map((i) => i.outcome.name));
        return items.map((i) => ({ ...i.outcome, reloads: [{ target: 'Deployment apps/api', result: 'restarted' as const }] }));
      },
      async (o) => {
        done.push(o.name);
      },
    );
    const slow = deferred();
    const first = batch.around(async () => batch.add(item('a')));
    const second = batch.around(async () => {
      await slow.promise;
      batch.add(item('b'));
    });
    await first;
    expect(batches).toEqual([]); // b is still running: a waits for it
    slow.resolve();
    await second;
    expect(batches).toEqual([['a', 'b']]);
    expect(done.sort()).toEqual(['a', 'b']);
  });

  it('does not wait for ever on checks that keep running', async () => {
    const batches: string[][] = [];
    const batch = reloadBatch(
      async (items) => {
        batches.push(items.map((i) => i.outcome.name));
        return items.map((i) => i.outcome);
      },
      async () => undefined,
      { maxWaitMs: 20 },
    );
    const never = deferred();
    void batch.around(async () => {
      batch.add(item('a'));
      await never.promise;
    });
    await expect.poll(() => batches, { timeout: 5_000 }).toEqual([['a']]);
    never.resolve();
  });

  it('reloads what was committed when the daemon stops', async () => {
    const batches: string[][] = [];
    const batch = reloadBatch(
      async (items) => {
        batches.push(items.map((i) => i.outcome.name));
        return items.map((i) => i.outcome);
      },
      async () => undefined,
    );
    const never = deferred();
    void batch.around(async () => {
      batch.add(item('a'));
      await never.promise;
    });
    await batch.flush();
    expect(batches).toEqual([['a']]);
    never.resolve();
  });
});

import { describe, expect, it } from 'vitest';

import { seedSink, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { itemsOf } from '../helpers/output-items.js';

const DAY = 24 * 3600_000;
const inDays = (d: number) => new Date(Date.now() + d * DAY);

/**
 * After a rotation the state holds a newer id than the policy (a regenerate mints one). A failure
 * is about the id the service was asked about: the output shows that one, and the policy's beside it.
 */
describe('the ids shown are the ids the service was asked about', () => {
  const fx = useCliFixture();

  it('plan, once and status show the current id from the state, with the policy id as policyId', async () => {
    const due = fx.emulator.store.add({ name: 'ingest', expiresAt: inDays(2) });
    const fine = fx.emulator.store.add({ name: 'fine', expiresAt: inDays(60) });
    await seedSink(fx.dir, 'secrets/fine.token', fine.secret);
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [
        { name: 'ingest', id: due.id, sinks: [{ type: 'file', path: 'secrets/ingest.token' }] },
        { name: 'fine', id: fine.id, sinks: [{ type: 'file', path: 'secrets/fine.token' }] },
      ],
    });
    const first = await fx.cli('once', '--json');
    expect(first.code, first.stderr).toBe(0);
    const current = itemsOf<{ newId: string }>(first.stdout, 'RunResult')[0]!.newId;
    expect(current).not.toBe(due.id);

    // The service now refuses to describe the current token.
    fx.emulator.faults.add({ op: 'retrieve', id: current, times: 1000, action: { kind: 'status', status: 404 } });
    const asked = fx.emulator.requests.length;

    const plan = await fx.cli('plan', '--json');
    expect(plan.code).toBe(1);
    const planned = itemsOf<Record<string, unknown>>(plan.stdout, 'PlanResult');
    expect(planned[0]).toMatchObject({ name: 'ingest', result: 'failed', id: current, policyId: due.id });
    // A name whose ids agree says it once.
    expect(planned[1]).toMatchObject({ name: 'fine', id: fine.id });
    expect(planned[1]).not.toHaveProperty('policyId');

    const once = await fx.cli('once', '--json');
    expect(once.code).toBe(1);
    expect(itemsOf(once.stdout, 'RunResult')[0]).toMatchObject({ name: 'ingest', result: 'failed', id: current, policyId: due.id });

    // What was asked is what is shown: the service was asked about the current id, never the policy's.
    const retrieved = fx.emulator.requests.slice(asked).filter((r) => r.op === 'retrieve');
    expect(retrieved.map((r) => r.id)).toContain(current);
    expect(retrieved.map((r) => r.id)).not.toContain(due.id);

    // The tables show the same id.
    for (const command of ['plan', 'once']) {
      const table = await fx.cli(command);
      expect(table.stdout, command).toMatch(new RegExp(`^ingest\\s+failed\\s+${current}\\s`, 'm'));
      expect(table.stdout, command).not.toContain(due.id);
    }

    const status = await fx.cli('status', '--json');
    expect(itemsOf(status.stdout, 'Status')[0]).toMatchObject({ name: 'ingest', id: current, policyId: due.id });
  });
});

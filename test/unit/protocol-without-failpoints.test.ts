import { describe, expect, it } from 'vitest';

import { rotateToken } from '../../src/rotation/rotate-token.js';
import { expectSettled } from '../fakes/expectations.js';
import { openWorld, type World } from '../fakes/fake-deps.js';

/** Deps as the CLI builds them: no failpoint (that hook exists for tests only). */
const production = (world: World) => ({ ...world.process(), failpoint: undefined });

describe('the protocol with deps as the CLI builds them (no failpoint hook)', () => {
  it('rotates, delivers, verifies and commits', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    const deps = production(world);
    expect(await rotateToken(policy, deps, { lockWaitMs: 0 })).toMatchObject({ action: 'rotated', verification: { result: 'passed' } });
    await expectSettled(world, deps.view, policy);
  });

  it('finishes a staged rotation whose delivery failed, without regenerating', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest');
    world.destinations.failWrites('ingest-b');
    expect(await rotateToken(policy, production(world), { lockWaitMs: 0 })).toMatchObject({ action: 'failed' });
    world.destinations.heal('ingest-b');
    const deps = production(world);
    expect(await rotateToken(policy, deps, { lockWaitMs: 0 })).toMatchObject({ action: 'rotated', check: 'resumed' });
    expect(world.service.regenerates).toHaveLength(1);
    await expectSettled(world, deps.view, policy);
  });
});

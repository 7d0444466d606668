import { describe, expect, it } from 'vitest';

import { rotateToken } from '../../src/rotation/rotate-token.js';
import { expectSettled } from '../fakes/expectations.js';
import { openWorld } from '../fakes/fake-deps.js';

describe('only an emergency rotation ends the tokens replaced earlier', () => {
  it('a scheduled rotation leaves an earlier token inside its overlap working, with no extra regenerate', async () => {
    const world = openWorld();
    const { policy, id: t0, secret: t0Secret } = world.token('ingest', { settings: { onDrift: 'rotate' } });
    expect(await rotateToken(policy, world.process(), { lockWaitMs: 0 })).toMatchObject({ action: 'rotated' });
    // A sink lost its secret: with onDrift rotate, the next check rotates again, inside T0's overlap.
    world.destinations.lose('ingest-b');
    const run = world.process();
    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    expect(outcome).toMatchObject({ action: 'rotated', check: 'sinkDrift' });
    expect(outcome).not.toHaveProperty('earlierTokens');
    expect(world.service.regenerates, 'one regenerate per rotation, no throwaway').toHaveLength(2);
    expect(world.service.works(t0Secret), 'the earlier token keeps its overlap').toBe(true);
    expect(world.service.committed(t0)).toHaveLength(1);
    await expectSettled(world, run.view, policy);
  });
});

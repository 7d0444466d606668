import { describe, expect, it } from 'vitest';

import { rotateToken } from '../../src/rotation/rotate-token.js';
import { keyIdOf } from '../../src/state/secret-box.js';
import { expectSettled } from '../fakes/expectations.js';
import { DAY, newStateKey, openWorld } from '../fakes/fake-deps.js';

describe('the held secret cannot be opened (the state key that sealed it is lost)', () => {
  it('a check stops with a key error; an emergency rotation starts over with a new token, sealed with the key it has', async () => {
    const world = openWorld();
    const { policy } = world.token('ingest', { expiresInMs: 60 * DAY });
    const lost = newStateKey();
    await rotateToken(policy, world.process({ stateKey: lost }), { lockWaitMs: 0, force: { reason: 'first' } });
    const current = world.service.committed()[0]!.newId!;
    const key = newStateKey();

    expect(await rotateToken(policy, world.process({ stateKey: key }), { lockWaitMs: 0 })).toMatchObject({
      action: 'failed',
      error: { code: 'ERR_STATE_KEY' },
    });
    expect(world.service.regenerates).toHaveLength(1);

    const run = world.process({ stateKey: key });
    const outcome = await rotateToken(policy, run, { lockWaitMs: 0, force: { reason: 'the old key is lost' } });
    expect(outcome).toMatchObject({ action: 'rotated', check: 'manual', oldId: current });
    expect(world.service.regenerates).toHaveLength(2);
    await expectSettled(world, run.view, policy);
    expect(JSON.parse(world.storage.readRaw('state', 'ingest')!)).toMatchObject({ secret: { value: { sealed: { kid: keyIdOf(key) } } } });
  });
});

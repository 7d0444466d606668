import { type Emulator, startEmulator } from 'token-rotator-emulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { rotateToken } from '../../src/rotation/rotate-token.js';
import { DAY, openWorld, testPolicy } from '../fakes/fake-deps.js';
import { memorySink } from '../fakes/memory-sink.js';
import { expectNoLeak } from '../helpers/leaks.js';
import { emulatorClient } from '../helpers/rotator-client.js';

/*
 * The emulator's `unusable-token` fault through the protocol, with the real client: a 200 whose
 * `token` field holds nothing usable means the service acted and the secret is lost. The rotation
 * fails, the orphan is reported, the intent is not left behind, and no second regenerate is sent.
 */

describe('a regenerate answered with an unusable token field, from the emulator', () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator({ rateLimitPerMinute: 1_000_000 });
  });
  afterAll(async () => {
    await emulator.close();
  });

  it.each([
    ['empty', {}],
    ['not a string', { token: 12345 }],
  ])('a token field that is %s: failed, the orphan named, one regenerate, nothing delivered', async (_what, fault) => {
    const world = openWorld(new Date());
    const old = emulator.store.add({ name: 'ingest', expiresAt: world.at(DAY) });
    const policy = testPolicy({ name: 'ingest', id: old.id, sinks: [memorySink('ingest-a')] });
    emulator.requests.length = 0;
    emulator.faults.add({ op: 'regenerate', id: old.id, action: { kind: 'unusable-token', ...fault } });
    const client = emulatorClient(emulator);
    const run = world.process({ api: client.api });

    const outcome = await rotateToken(policy, run, { lockWaitMs: 0 });
    const sent = emulator.requests.filter((r) => r.op === 'regenerate');
    expect(sent).toEqual([expect.objectContaining({ id: old.id, status: 200, committed: true })]);
    const { existingTokenExpiresAt } = sent[0]!.body as { existingTokenExpiresAt: string };
    expect(outcome).toMatchObject({
      action: 'failed',
      error: { code: 'ERR_REGENERATE_ANSWER_UNUSABLE' },
      orphans: [{ name: 'ingest', oldId: old.id, oldTokenWorksUntil: existingTokenExpiresAt }],
    });
    const orphan = emulator.store.get(old.id)?.replacedBy;
    expect(orphan, 'the service minted a token whose secret nobody has').toEqual(expect.any(String));
    expect(await world.storage.open().journal.read('ingest')).toBeUndefined();
    expect(world.destinations.writes).toEqual([]);
    expectNoLeak({ log: world.logs.text() + client.log.lines.join(''), outcome: JSON.stringify(outcome) }, [
      emulator.store.get(orphan!)!.secret,
    ]);
  });
});

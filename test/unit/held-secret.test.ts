import { describe, expect, it } from 'vitest';

import { rotateToken } from '../../src/rotation/rotate-token.js';
import { keyIdOf } from '../../src/state/secret-box.js';
import { expectSettled } from '../fakes/expectations.js';
import { DAY, newStateKey, openWorld } from '../fakes/fake-deps.js';

/** A name rotated once with `key` (a new one unless given; none when null), not due for days; both sinks hold its secret. */
async function rotatedOnce(given?: ReturnType<typeof newStateKey> | null) {
  const key = given === null ? undefined : (given ?? newStateKey());
  const world = openWorld();
  const token = world.token('ingest', { expiresInMs: 2 * DAY });
  expect(await rotateToken(token.policy, world.process(key ? { stateKey: key } : {}), { lockWaitMs: 0 })).toMatchObject({
    action: 'rotated',
  });
  const current = world.service.committed()[0]!.newId!;
  return { world, ...token, current, secret: world.service.token(current)!.secret };
}

describe('the state holds the current secret', () => {
  it('sealed with the state key and bound to the name and id, never plain', async () => {
    const key = newStateKey();
    const { world, current, secret } = await rotatedOnce(key);
    const raw = world.storage.readRaw('state', 'ingest')!;
    expect(raw).not.toContain(secret);
    const record = JSON.parse(raw) as { currentId: string; secret: { how: string; value: { sealed: { kid: string } } } };
    expect(record.currentId).toBe(current);
    expect(record.secret).toMatchObject({ how: 'rotated', value: { sealed: { alg: 'A256GCM', kid: keyIdOf(key) } } });
  });

  it('a sealed secret moved to another name does not open: the check stops with a key error, nothing rotated', async () => {
    const key = newStateKey();
    const { world, policy } = await rotatedOnce(key);
    const other = world.token('other', { expiresInMs: 60 * DAY });
    await rotateToken(other.policy, world.process({ stateKey: key }), { lockWaitMs: 0 });
    const raw = JSON.parse(world.storage.readRaw('state', 'ingest')!) as { secret: unknown };
    const otherRaw = JSON.parse(world.storage.readRaw('state', 'other')!) as Record<string, unknown>;
    world.storage.writeRaw('state', 'other', JSON.stringify({ ...otherRaw, secret: raw.secret }));
    const regenerates = world.service.regenerates.length;
    world.destinations.lose('other-b');
    const outcome = await rotateToken(other.policy, world.process({ stateKey: key }), { lockWaitMs: 0 });
    expect(outcome).toMatchObject({ action: 'failed', error: { code: 'ERR_STATE_KEY' } });
    expect(world.service.regenerates).toHaveLength(regenerates);
    expect(policy.name).toBe('ingest');
  });
});

describe('the state key has a life cycle: nothing is rotated for a key change', () => {
  it('setting a key where there was none, changing it with the previous one given, then dropping the previous: zero regenerates', async () => {
    const { world, policy, current, secret } = await rotatedOnce(null);
    expect(JSON.parse(world.storage.readRaw('state', 'ingest')!)).toMatchObject({ secret: { value: { plain: secret } } });
    const regenerates = world.service.regenerates.length;

    // A key is set: the plain secret is sealed with it at this run, and the sinks still match.
    const first = newStateKey();
    expect(await rotateToken(policy, world.process({ stateKey: first }), { lockWaitMs: 0 })).toMatchObject({ action: 'skipped' });
    const sealedFirst = world.storage.readRaw('state', 'ingest')!;
    expect(sealedFirst).not.toContain(secret);
    expect(JSON.parse(sealedFirst)).toMatchObject({ secret: { value: { sealed: { kid: keyIdOf(first) } } } });

    // The key changes, the old one given as previous: re-sealed with the new one, and a lost sink is
    // repaired with the same secret.
    const second = newStateKey();
    world.destinations.lose('ingest-b');
    expect(await rotateToken(policy, world.process({ stateKey: second, previousStateKeys: [first] }), { lockWaitMs: 0 })).toMatchObject({
      action: 'redelivered',
    });
    expect(JSON.parse(world.storage.readRaw('state', 'ingest')!)).toMatchObject({
      secret: { value: { sealed: { kid: keyIdOf(second) } } },
    });

    // The previous key dropped: everything opens with the current one.
    expect(await rotateToken(policy, world.process({ stateKey: second }), { lockWaitMs: 0 })).toMatchObject({
      action: 'skipped',
      check: 'notDue',
    });
    expect(world.service.regenerates).toHaveLength(regenerates);
    await expectSettled(world, world.process().view, policy, current);
  });

  it('a key that opens nothing is a key error naming the variables, never a rotation, and changes nothing', async () => {
    const { world, policy } = await rotatedOnce();
    const before = world.storage.readRaw('state', 'ingest');
    const regenerates = world.service.regenerates.length;
    world.destinations.lose('ingest-b');
    const outcome = await rotateToken(policy, world.process({ stateKey: newStateKey() }), { lockWaitMs: 0 });
    expect(outcome).toMatchObject({
      action: 'failed',
      error: { code: 'ERR_STATE_KEY', message: expect.stringMatching(/ROTATOR_STATE_KEY_PREVIOUS/) },
    });
    expect(world.service.regenerates).toHaveLength(regenerates);
    expect(JSON.parse(world.storage.readRaw('state', 'ingest')!).secret).toEqual(JSON.parse(before!).secret);
  });

  it('without any key, a sealed secret is a key error too', async () => {
    const { world, policy } = await rotatedOnce();
    world.destinations.lose('ingest-b');
    const outcome = await rotateToken(policy, world.process(), { lockWaitMs: 0 });
    expect(outcome).toMatchObject({
      action: 'failed',
      error: { code: 'ERR_STATE_KEY', message: expect.stringMatching(/set ROTATOR_STATE_KEY/) },
    });
    expect(world.service.regenerates).toHaveLength(1);
  });
});

describe('a record from before the state held secrets', () => {
  it('takes the current secret from a sink that matches its fingerprint, and repairs the other without a new token', async () => {
    const key = newStateKey();
    const { world, policy, current, secret } = await rotatedOnce(key);
    const { secret: _held, ...legacy } = JSON.parse(world.storage.readRaw('state', 'ingest')!) as Record<string, unknown>;
    world.storage.writeRaw('state', 'ingest', JSON.stringify(legacy));
    world.destinations.lose('ingest-b');

    const outcome = await rotateToken(policy, world.process({ stateKey: key }), { lockWaitMs: 0 });
    expect(outcome).toMatchObject({ action: 'redelivered', sinks: [{ sink: 'memory ingest-b', result: 'created' }] });
    expect(world.service.regenerates).toHaveLength(1);
    expect(world.destinations.secret('ingest-b')).toBe(secret);
    expect(JSON.parse(world.storage.readRaw('state', 'ingest')!)).toMatchObject({ currentId: current, secret: { how: 'adopted' } });
  });

  it('with no sink holding it either, only a new token repairs a sink, and the reason says why', async () => {
    const { world, policy } = await rotatedOnce();
    const { secret: _held, ...legacy } = JSON.parse(world.storage.readRaw('state', 'ingest')!) as Record<string, unknown>;
    world.storage.writeRaw('state', 'ingest', JSON.stringify(legacy));
    world.destinations.lose('ingest-a');
    world.destinations.lose('ingest-b');
    const outcome = await rotateToken(policy, world.process(), { lockWaitMs: 0 });
    expect(outcome).toMatchObject({
      action: 'rotated',
      reason: expect.stringMatching(/the current secret is unknown \(the state holds no copy/),
    });
  });
});

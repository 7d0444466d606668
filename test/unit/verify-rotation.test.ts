import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { RotationDeps } from '../../src/rotation/deps.js';
import { verifyRotation } from '../../src/rotation/verify-rotation.js';
import { Secret } from '../../src/secret.js';
import type { SinkConfig } from '../../src/sinks/registry.js';
import { verifyProbeSchema } from '../../src/verify/verify-config.js';
import { DAY, HOUR, openWorld } from '../fakes/fake-deps.js';
import type { MemorySinkConfig } from '../fakes/memory-sink.js';
import { intentEntry, rotationContext, stagedEntry, stoppedAt } from '../fakes/rotation-context.js';

/*
 * Step 6 on its own: what the verification of a staged, delivered secret answers for each thing the
 * service, the sinks and the probe can say. A failure keeps the secret staged (the caller commits
 * nothing), so every way the new token can be wrong must come out as `ok: false`.
 */

/** A name rotated as far as delivery: the old token, the new one the service minted, both sinks holding it. */
function delivered(input: { newExpiresInMs?: number | null; askedExpiresInMs?: number | null; newName?: string } = {}) {
  const world = openWorld();
  const old = world.token('ingest');
  const newExpiresInMs = input.newExpiresInMs === undefined ? 30 * DAY : input.newExpiresInMs;
  const asked = input.askedExpiresInMs === undefined ? 30 * DAY : input.askedExpiresInMs;
  const minted = world.service.add({
    name: input.newName ?? 'ingest',
    expiresAt: newExpiresInMs === null ? null : world.at(newExpiresInMs),
  });
  for (const config of old.policy.sinks) world.destinations.put((config as unknown as MemorySinkConfig).key, minted.secret);
  const intent = intentEntry({
    name: 'ingest',
    oldId: old.id,
    startedAt: world.clock.now(),
    oldExpiresAt: world.at(DAY),
    existingTokenExpiresAt: world.at(HOUR),
    newTokenExpiresAt: asked === null ? null : world.at(asked),
  });
  const entry = stagedEntry(intent, {
    newId: minted.id,
    newExpiresAt: minted.expiresAt,
    secret: minted.secret,
    stagedAt: world.clock.now(),
  });
  const run = world.process();
  const oldToken = { id: old.id, name: 'ingest', expiresAt: world.at(DAY) };
  return { world, old, minted, entry, run, oldToken, secret: new Secret(minted.secret) };
}

const keyOf = (config: SinkConfig) => (config as unknown as MemorySinkConfig).key;

/** The run's sinks, but those named cannot be read back (a write-only destination). */
function withWriteOnly(deps: RotationDeps, ...keys: string[]): RotationDeps {
  const sinks = deps.sinks;
  return {
    ...deps,
    sinks: {
      target: (c) => sinks.target(c),
      describe: (c) => sinks.describe(c),
      readable: (c) => !keys.includes(keyOf(c)) && sinks.readable(c),
      write: (c, s, m, o) => sinks.write(c, s, m, o),
      read: (c, o) => sinks.read(c, o),
      preflight: (c, o) => sinks.preflight(c, o),
      identify: (c, o) => sinks.identify(c, o),
      close: () => sinks.close(),
    },
  };
}

describe('the service check', () => {
  it('passes a new token known under the replaced token’s name and the expiry asked: service and read-back, no warning', async () => {
    const { old, entry, run, oldToken, secret, world, minted } = delivered();
    const result = await verifyRotation(rotationContext(old.policy, run, { token: oldToken }), entry, secret, undefined);
    expect(result).toEqual({ ok: true, checks: ['service', 'read-back'] });
    expect(world.service.retrieves).toEqual([minted.id]);
  });

  it('fails when the service knows the new id under another name than the token it replaces: never committed', async () => {
    const { old, entry, run, oldToken, secret, minted } = delivered({ newName: 'someone-else' });
    const result = await verifyRotation(rotationContext(old.policy, run, { token: oldToken }), entry, secret, undefined);
    expect(result).toEqual({ ok: false, check: 'service', message: expect.stringContaining(minted.id) });
    expect(result).toMatchObject({ message: expect.stringContaining('someone-else') });
  });

  it('fails when the service answers another token for the new id', async () => {
    const { old, entry, run, oldToken, secret, world } = delivered();
    const other = world.service.add({ name: 'ingest', expiresAt: world.at(30 * DAY) });
    const lying = { ...run, api: { ...run.api, retrieve: () => world.service.retrieve(other.id) } };
    const result = await verifyRotation(rotationContext(old.policy, lying, { token: oldToken }), entry, secret, undefined);
    expect(result).toMatchObject({ ok: false, check: 'service', message: expect.stringContaining(other.id) });
  });

  it('checks the name only against the token this run replaced: without it (a resumed rotation), any name passes', async () => {
    const { old, entry, run, secret } = delivered({ newName: 'renamed-by-hand' });
    expect(await verifyRotation(rotationContext(old.policy, run), entry, secret, undefined)).toEqual({
      ok: true,
      checks: ['service', 'read-back'],
    });
    const another = { id: 'another-token', name: 'ingest', expiresAt: null };
    expect(await verifyRotation(rotationContext(old.policy, run, { token: another }), entry, secret, undefined)).toMatchObject({
      ok: true,
    });
  });

  it.each([
    ['never expires though an expiry was asked', null, 30 * DAY],
    ['expires days before the expiry asked (a capped lifetime)', 10 * DAY, 30 * DAY],
    ['expires days after the expiry asked', 31 * DAY + HOUR, 30 * DAY],
  ])('a new token that %s passes with a warning naming it', async (_what, newExpiresInMs, askedExpiresInMs) => {
    const { old, entry, run, oldToken, secret, minted } = delivered({ newExpiresInMs, askedExpiresInMs });
    const result = await verifyRotation(rotationContext(old.policy, run, { token: oldToken }), entry, secret, undefined);
    expect(result).toEqual({ ok: true, checks: ['service', 'read-back'], warnings: [expect.stringContaining(minted.id)] });
  });

  it.each([
    ['no expiry was asked: whatever the service gave is fine', 10 * DAY, null],
    ['the expiry is within a day of what was asked (service rounding)', 30 * DAY - 23 * HOUR, 30 * DAY],
  ])('no warning when %s', async (_what, newExpiresInMs, askedExpiresInMs) => {
    const { old, entry, run, oldToken, secret } = delivered({ newExpiresInMs, askedExpiresInMs });
    const result = await verifyRotation(rotationContext(old.policy, run, { token: oldToken }), entry, secret, undefined);
    expect(result).toEqual({ ok: true, checks: ['service', 'read-back'] });
  });

  it('a failed retrieve of the new token fails the service check, naming the token and the service’s answer; no sink is read', async () => {
    const { old, entry, run, oldToken, secret, minted, world } = delivered();
    world.service.onRetrieve({ id: minted.id, status: 503 });
    let reads = 0;
    const counting = {
      ...run,
      sinks: { ...run.sinks, read: (...args: Parameters<RotationDeps['sinks']['read']>) => (reads++, run.sinks.read(...args)) },
    };
    const result = await verifyRotation(rotationContext(old.policy, counting, { token: oldToken }), entry, secret, undefined);
    expect(result).toEqual({ ok: false, check: 'service', message: expect.stringContaining(minted.id) });
    expect(result).toMatchObject({ message: expect.stringContaining('503') });
    expect(reads).toBe(0);
  });

  it('a stop at the deadline gives up the retrieve still waiting: the verification ends instead of passing or failing', async () => {
    const { old, entry, run, oldToken, secret } = delivered();
    const stop = new AbortController();
    // No sink can be read back and there is no probe: the retrieve is all there is to stop.
    const deps = { ...withWriteOnly(run, 'ingest-a', 'ingest-b'), api: stoppedAt(run.api, stop, { op: 'retrieve', call: 1 }) };
    const ctx = { ...rotationContext(old.policy, deps, { token: oldToken }), signal: stop.signal };
    await expect(verifyRotation(ctx, entry, secret, undefined)).rejects.toThrow('deadline');
  });

  it('a failed retrieve without a stop is a failed check, not a thrown error', async () => {
    const { old, entry, run, oldToken, secret, minted, world } = delivered();
    world.service.onRetrieve({ id: minted.id, status: 503 });
    const ctx = { ...rotationContext(old.policy, run, { token: oldToken }), signal: new AbortController().signal };
    expect(await verifyRotation(ctx, entry, secret, undefined)).toMatchObject({ ok: false, check: 'service' });
  });
});

describe('the read-back', () => {
  it('a sink that holds no secret after delivery fails, naming that sink as the one to write again', async () => {
    const { old, entry, run, oldToken, secret, world } = delivered();
    world.destinations.lose('ingest-b');
    const result = await verifyRotation(rotationContext(old.policy, run, { token: oldToken }), entry, secret, undefined);
    expect(result).toEqual({
      ok: false,
      check: 'read-back',
      target: 'memory:ingest-b',
      message: expect.stringContaining('memory ingest-b'),
    });
  });

  it('a sink that holds another secret fails, naming that sink as the one to write again', async () => {
    const { old, entry, run, oldToken, secret, world } = delivered();
    world.destinations.put('ingest-a', old.secret);
    const result = await verifyRotation(rotationContext(old.policy, run, { token: oldToken }), entry, secret, undefined);
    expect(result).toEqual({
      ok: false,
      check: 'read-back',
      target: 'memory:ingest-a',
      message: expect.stringContaining('memory ingest-a'),
    });
  });

  it('a sink that cannot be read fails without a target: it is read again next time, not written again', async () => {
    const { old, entry, run, oldToken, secret, world } = delivered();
    world.destinations.failReads('ingest-b', 'store unreachable (injected)');
    const result = await verifyRotation(rotationContext(old.policy, run, { token: oldToken }), entry, secret, undefined);
    expect(result).toEqual({ ok: false, check: 'read-back', message: expect.stringContaining('memory ingest-b') });
    expect(result).toMatchObject({ message: expect.stringContaining('store unreachable (injected)') });
  });

  it('a stop at the deadline gives up a read-back still waiting: the verification ends instead of passing or failing', async () => {
    const { old, entry, run, oldToken, secret } = delivered();
    const stop = new AbortController();
    const stopping = {
      ...run,
      sinks: {
        ...run.sinks,
        read: (...args: Parameters<RotationDeps['sinks']['read']>) => {
          stop.abort(new Error('deadline'));
          return run.sinks.read(...args);
        },
      },
    };
    const ctx = { ...rotationContext(old.policy, stopping, { token: oldToken }), signal: stop.signal };
    await expect(verifyRotation(ctx, entry, secret, undefined)).rejects.toThrow('deadline');
  });

  it('a sink that cannot be read back by its nature is skipped, and the others are still checked', async () => {
    const { old, entry, run, oldToken, secret, world } = delivered();
    world.destinations.failReads('ingest-a');
    const writeOnlyA = withWriteOnly(run, 'ingest-a');
    expect(await verifyRotation(rotationContext(old.policy, writeOnlyA, { token: oldToken }), entry, secret, undefined)).toEqual({
      ok: true,
      checks: ['service', 'read-back'],
    });
    world.destinations.put('ingest-b', old.secret);
    expect(await verifyRotation(rotationContext(old.policy, writeOnlyA, { token: oldToken }), entry, secret, undefined)).toMatchObject({
      ok: false,
      check: 'read-back',
      target: 'memory:ingest-b',
    });
  });

  it('the service verdict comes first: a wrong new token fails the service check even when a sink also reads back wrong', async () => {
    const { old, entry, run, oldToken, secret, world } = delivered({ newName: 'someone-else' });
    world.destinations.lose('ingest-a');
    const result = await verifyRotation(rotationContext(old.policy, run, { token: oldToken }), entry, secret, undefined);
    expect(result).toMatchObject({ ok: false, check: 'service' });
  });
});

describe('the probe with the new token', () => {
  let server: Server;
  let base: string;
  let answer: (respond: (status: number) => void) => void = (respond) => respond(200);
  const seen: string[] = [];
  beforeAll(async () => {
    server = createServer((request, response) => {
      seen.push(request.headers.authorization ?? '');
      answer((status) => response.writeHead(status).end());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const noWait = { sleep: () => Promise.resolve() };
  const probe = (path = '/v2/user') => verifyProbeSchema.parse({ url: `${base}${path}`, retries: 1 });

  it('passes when the probe accepts the new token: service, read-back and probe checked', async () => {
    const { old, entry, run, oldToken, secret, minted } = delivered();
    answer = (respond) => respond(200);
    seen.length = 0;
    const result = await verifyRotation(rotationContext(old.policy, run, { token: oldToken }), entry, secret, probe(), noWait);
    expect(result).toEqual({ ok: true, checks: ['service', 'read-back', 'probe'] });
    expect(seen).toEqual([`Bearer ${minted.secret}`]);
  });

  it('fails the probe check when the new token is refused, with the sleep given for the spacing between tries', async () => {
    const { old, entry, run, oldToken, secret } = delivered();
    answer = (respond) => respond(401);
    seen.length = 0;
    const waits: number[] = [];
    const sleep = (ms: number) => {
      waits.push(ms);
      return Promise.resolve();
    };
    const result = await verifyRotation(rotationContext(old.policy, run, { token: oldToken }), entry, secret, probe(), { sleep });
    expect(result).toEqual({ ok: false, check: 'probe', message: expect.stringContaining('401') });
    expect(seen).toHaveLength(2);
    expect(waits).toEqual([1000]);
  });

  it('masks anything token-shaped in the probe’s failure before it is stored or shown', async () => {
    const { old, entry, run, oldToken, secret } = delivered();
    answer = (respond) => respond(500);
    const path = '/hooks/xaat-9f8e7d6c5b4a39281706';
    const result = await verifyRotation(rotationContext(old.policy, run, { token: oldToken }), entry, secret, probe(path), noWait);
    expect(result).toMatchObject({ ok: false, check: 'probe' });
    expect(JSON.stringify(result)).not.toContain('xaat-9f8e7d6c5b4a39281706');
    expect(JSON.stringify(result)).toContain('[MASKED]');
  });

  it('a stop at the deadline while the probe is asked ends the verification instead of failing the probe', async () => {
    const { old, entry, run, oldToken, secret } = delivered();
    const stop = new AbortController();
    answer = (respond) => {
      stop.abort(new Error('deadline'));
      setTimeout(() => respond(200), 50);
    };
    const ctx = { ...rotationContext(old.policy, run, { token: oldToken }), signal: stop.signal };
    await expect(verifyRotation(ctx, entry, secret, probe(), noWait)).rejects.toThrow();
  });
});

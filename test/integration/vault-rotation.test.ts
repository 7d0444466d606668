import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { rotateToken } from '../../src/rotation/rotate-token.js';
import { Secret } from '../../src/secret.js';
import type { SinkConfig } from '../../src/sinks/registry.js';
import type { SinkType } from '../../src/sinks/sink.js';
import { openSinkSet, type SinkSet } from '../../src/sinks/sink-set.js';
import { type VaultSinkConfig, vaultSinkType } from '../../src/sinks/vault/vault-sink.js';
import { startVaultDouble, type VaultDouble } from '../doubles/vault/start-vault-double.js';
import { sinkPolicy } from '../doubles/vault/vault-here.js';
import { crashedAt, expectNoSecretIn } from '../fakes/expectations.js';
import { openWorld, testPolicy } from '../fakes/fake-deps.js';
import { memorySink, type MemorySinkConfig } from '../fakes/memory-sink.js';

/*
 * The vault sink inside the rotation protocol (lock, journal, deliver, commit), with the fake token
 * service and an in-memory sink beside it: crashes and a failing Vault resume without a second
 * version, and a secret changed behind the rotator's back is found and healed.
 */

let v: VaultDouble;
let token: string;
let count = 0;

beforeAll(async () => {
  v = await startVaultDouble();
  v.mount('secret');
  v.policy('token-rotator', sinkPolicy('secret', 'rotation/*'));
  token = v.token({ policies: ['token-rotator'] });
});
afterAll(() => v.close());

function setup() {
  const world = openWorld();
  const parsed = vaultSinkType.parse({ type: 'vault', address: v.url, path: `rotation/ingest-${++count}` }, { policyDir: '/', env: {} });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  const vault = parsed.config;
  const { id } = world.service.add({ name: 'ingest', expiresAt: world.at(3600_000) });
  const policy = testPolicy({ name: 'ingest', id, sinks: [vault as unknown as SinkConfig, memorySink('ingest-b')] });
  /** A process whose sinks are this vault sink and the world's memory sink. */
  const process = (options: Parameters<typeof world.process>[0] = {}) => {
    const sinks = openSinkSet<VaultSinkConfig | MemorySinkConfig>(
      { vault: vaultSinkType, memory: world.destinations.type() } as Record<string, SinkType<VaultSinkConfig | MemorySinkConfig>>,
      { logger: world.logs.logger, env: {}, reference: (variable) => (variable === 'VAULT_TOKEN' ? new Secret(token) : undefined) },
    ) as unknown as SinkSet<SinkConfig>;
    return world.process({ sinks, ...options });
  };
  const stored = () => v.kv.get({ path: vault.path });
  return { world, vault, policy, process, stored };
}

describe('the vault sink in a rotation', () => {
  it('delivers once across a crash after staging: one version, marked, with the new token’s id', async () => {
    const { world, policy, process, stored } = setup();
    const dying = process({ crashAt: { step: 'staged' }, lockOnCrash: 'released' });
    await crashedAt(rotateToken(policy, dying, { lockWaitMs: 0 }), 'staged');
    expect(stored()).toBeUndefined();

    const outcome = await rotateToken(policy, process(), { lockWaitMs: 0 });
    const [minted] = world.service.committed();
    expect(outcome).toMatchObject({ action: 'rotated', check: 'resumed', newId: minted!.newId });
    expect(stored()).toMatchObject({
      currentVersion: 1,
      data: { token: world.service.token(minted!.newId!)!.secret },
      customMetadata: { 'managed-by': 'token-rotator', 'token-id': minted!.newId, 'token-name': 'ingest', 'data-version': '1' },
    });
    // A second run changes nothing.
    expect(await rotateToken(policy, process(), { lockWaitMs: 0 })).toMatchObject({ action: 'skipped' });
    expect(stored()?.currentVersion).toBe(1);
    expectNoSecretIn(world.logs.text(), world.service);
  });

  it('a crash after Vault was delivered to, before the next sink: the next run writes only the other sink', async () => {
    const { world, policy, process, stored } = setup();
    await crashedAt(
      rotateToken(policy, process({ crashAt: { step: 'delivered' }, lockOnCrash: 'released' }), { lockWaitMs: 0 }),
      'delivered',
    );
    expect(stored()?.currentVersion).toBe(1);
    const before = v.requests.length;
    expect(await rotateToken(policy, process(), { lockWaitMs: 0 })).toMatchObject({ action: 'rotated', check: 'resumed' });
    expect(stored()?.currentVersion).toBe(1);
    expect(
      v.requests.slice(before).filter((r) => r.method !== 'GET'),
      'Vault is only read',
    ).toEqual([]);
    expect(world.destinations.secret('ingest-b')).toBe(stored()?.data?.token);
  });

  it('Vault down from the start: nothing is regenerated, the sink named, the old token untouched', async () => {
    const { world, policy, process, stored } = setup();
    v.seal();
    try {
      const refused = await rotateToken(policy, process(), { lockWaitMs: 0 });
      expect(refused).toMatchObject({
        action: 'failed',
        error: {
          code: 'ERR_SINK',
          message: expect.stringMatching(/not rotated, the old token is untouched: .*vault .*503 Vault is sealed/),
        },
      });
      expect(world.service.regenerates).toEqual([]);
    } finally {
      v.unseal();
    }
    expect(stored()).toBeUndefined();
    expect(await rotateToken(policy, process(), { lockWaitMs: 0 })).toMatchObject({ action: 'rotated' });
    expect(world.service.regenerates).toHaveLength(1);
  });

  it('Vault going down after its preflight keeps the secret staged and the other sink delivered; the next run finishes without regenerating', async () => {
    const { world, policy, process, stored } = setup();
    // Sealed while the regenerate is in flight: after every sink proved it could take the write.
    world.service.onRegenerate({ kind: 'answer', meanwhile: () => v.seal() });
    try {
      const failed = await rotateToken(policy, process(), { lockWaitMs: 0 });
      expect(failed).toMatchObject({ action: 'failed' });
      expect(failed.sinks).toEqual([
        {
          sink: expect.stringMatching(/^vault /),
          result: 'failed',
          error: expect.stringContaining('503 Vault is sealed (Vault is sealed, in maintenance or overloaded; the next run tries again)'),
        },
        { sink: 'memory ingest-b', result: 'created' },
      ]);
    } finally {
      v.unseal();
    }
    expect(stored()).toBeUndefined();
    expect(await rotateToken(policy, process(), { lockWaitMs: 0 })).toMatchObject({ action: 'rotated', check: 'resumed' });
    expect(world.service.regenerates).toHaveLength(1);
    expect(stored()?.currentVersion).toBe(1);
  });

  it('finds a secret changed behind its back and heals it with the current secret, no new token', async () => {
    const { world, vault, policy, process, stored } = setup();
    await rotateToken(policy, process(), { lockWaitMs: 0 });
    expect(stored()?.currentVersion).toBe(1);
    v.kv.put({ path: vault.path }, { token: 'edited-by-hand' });

    const healed = await rotateToken(policy, process(), { lockWaitMs: 0 });
    expect(healed).toMatchObject({ action: 'redelivered', drift: [expect.objectContaining({ kind: 'foreign' })] });
    expect(world.service.regenerates).toHaveLength(1);
    const current = world.service.committed().at(-1)!;
    expect(stored()).toMatchObject({ currentVersion: 3, data: { token: world.service.token(current.newId!)!.secret } });
    expect(stored()?.customMetadata).toMatchObject({ 'token-id': current.newId, 'data-version': '3' });
  });
});

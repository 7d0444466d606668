import { rm } from 'node:fs/promises';

import type { JsonObject } from 'token-rotator-kubernetes-double';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

import { systemClock } from '../../src/clock.js';
import { KubernetesError } from '../../src/errors.js';
import { createKubernetesClient, type KubernetesClient } from '../../src/kubernetes/client.js';
import { resolveConnection } from '../../src/kubernetes/connection.js';
import { leaseNameLocks, leaseObjectName } from '../../src/state/backends/kubernetes/lease-locks.js';
import { leaseTiming, MIN_LEASE_MS } from '../../src/state/backends/kubernetes/lease-rules.js';
import {
  kubernetesStateObjects,
  ROLE_LABEL,
  stateObjectName,
  TOKEN_NAME_ANNOTATION,
} from '../../src/state/backends/kubernetes/state-objects.js';
import { openStateBackend } from '../../src/state/backends/registry.js';
import type { StateBackend } from '../../src/state/state-backend.js';
import { type BackendHarness, stateBackendContract } from '../contracts/state-backend-contract.js';
import { silentLogger } from '../fakes/fake-deps.js';
import { anIntent } from '../helpers/journal-entries.js';
import { type KubernetesHere, kubernetesHere } from '../helpers/kubernetes.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/**
 * The product's own timing rule at the shortest lease it allows: a crashed holder is taken over
 * within seconds, and a live one renews every 400 ms with 2 s to spare, which a loaded machine
 * keeps (hand-picked 600/400/80 ms timings lost live holders under load).
 */
const FAST = leaseTiming(MIN_LEASE_MS);

let k: KubernetesHere;
let dir: string;
let namespaces = 0;

beforeAll(async () => {
  dir = await makeTempDir();
  k = await kubernetesHere(dir);
});
afterAll(async () => {
  await k.double.close();
  await rm(dir, { recursive: true, force: true });
});

function client(): KubernetesClient {
  return createKubernetesClient(resolveConnection(k.env)!, { logger: silentLogger() });
}

/**
 * A process's view: its own client, whose Lease calls fail once it "crashed", as a dead process's
 * renewals stop. Everything else still answers, so a stopped process that comes back finds out by
 * assertHeld, as the contract says.
 */
function view(namespace: string, crashed: WeakSet<StateBackend>): StateBackend {
  const api = client();
  const gone = (path: string) => {
    if (crashed.has(backend) && path.includes('/leases')) throw new KubernetesError('this process is gone', { status: 503 });
  };
  const frozen: KubernetesClient = {
    ...api,
    get: async (path, options) => (gone(path), api.get(path, options)),
    create: async (path, body, options) => (gone(path), api.create(path, body, options)),
    replace: async (path, body, options) => (gone(path), api.replace(path, body, options)),
  };
  const objects = kubernetesStateObjects(api, namespace);
  const backend: StateBackend = {
    describe: () => `kubernetes namespace ${namespace}`,
    state: objects.state,
    journal: objects.journal,
    locks: leaseNameLocks(frozen, namespace, { clock: systemClock, logger: silentLogger(), timing: FAST }),
  };
  return backend;
}

async function openHarness(): Promise<BackendHarness> {
  namespaces += 1;
  const namespace = `contract-${namespaces}`;
  k.double.objects.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  const crashed = new WeakSet<StateBackend>();
  const key = (kind: 'state' | 'journal') => (kind === 'state' ? 'record' : 'journal');
  return {
    backend: view(namespace, crashed),
    openView: async () => view(namespace, crashed),
    crash: async (v) => void crashed.add(v),
    async writeRaw(kind, name, text) {
      const existing = k.double.objects.get('secrets', namespace, stateObjectName(name));
      const object: JsonObject = existing ?? {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: stateObjectName(name),
          namespace,
          labels: { 'app.kubernetes.io/managed-by': 'token-rotator', [ROLE_LABEL]: 'state' },
          annotations: { [TOKEN_NAME_ANNOTATION]: name },
        },
        type: 'Opaque',
      };
      k.double.objects.put({
        ...object,
        data: { ...((object.data as Record<string, string>) ?? {}), [key(kind)]: Buffer.from(text).toString('base64') },
      });
    },
    async readRaw(kind, name) {
      const data = k.double.objects.get('secrets', namespace, stateObjectName(name))?.data as Record<string, string> | undefined;
      const value = data?.[key(kind)];
      return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
    },
  };
}

// A takeover waits out a whole lease (3 s) on the real clock, a few times in some tests.
vi.setConfig({ testTimeout: 60_000 });
stateBackendContract('kubernetes', openHarness);

/** An intent entry of `name`: a rotation just started. */
const intent = (name: string) => anIntent(name, { rotationId: `r-${name}` });

describe('the kubernetes state backend, in the cluster', () => {
  it('keeps one labelled Secret per name (record and journal), and one Lease, with names safe for any token name', async () => {
    const backend = await openStateBackend('kubernetes', {
      dir,
      env: { ...k.env, ROTATOR_STATE_NAMESPACE: 'token-rotator' },
      clock: systemClock,
      logger: silentLogger(),
    });
    const name = 'Ingest_Prod.v2';
    const lock = await backend.locks.acquire(name, { waitMs: 0 });
    if (!('held' in lock)) throw new Error('expected the lock');
    const lease = k.double.objects.get('leases', 'token-rotator', leaseObjectName(name)) as {
      spec: Record<string, unknown>;
      metadata: { name: string };
    };
    expect(lease.metadata.name).toMatch(/^token-rotator-lock-ingest-prod-v2-[0-9a-f]{10}$/);
    expect(lease.spec).toMatchObject({ holderIdentity: expect.stringMatching(new RegExp(`_${process.pid}_`)), leaseDurationSeconds: 15 });
    await lock.held.release();
    expect(
      (k.double.objects.get('leases', 'token-rotator', leaseObjectName(name)) as { spec: { holderIdentity?: string } }).spec
        .holderIdentity ?? '',
    ).toBe('');

    const { resolveLineage } = await import('../../src/state/lineage.js');
    await backend.state.write(resolveLineage({ name, id: 'tok-1' }, undefined, new Date()).record);
    const secret = k.double.objects.get('secrets', 'token-rotator', stateObjectName(name)) as {
      metadata: { labels: Record<string, string>; annotations: Record<string, string> };
      data: Record<string, string>;
    };
    expect(secret.metadata.labels).toEqual({ 'app.kubernetes.io/managed-by': 'token-rotator', 'token-rotator.io/role': 'state' });
    expect(secret.metadata.annotations[TOKEN_NAME_ANNOTATION]).toBe(name);
    expect(Object.keys(secret.data)).toEqual(['record']);
    // Another name that folds to the same readable part still gets its own object.
    expect(stateObjectName('ingest-prod-v2')).not.toBe(stateObjectName(name));
  });

  it('never overwrites another writer: a write after the Secret changed under it stops with a StateError and leaves it as it was', async () => {
    const { resolveLineage } = await import('../../src/state/lineage.js');
    const objects = kubernetesStateObjects(client(), 'token-rotator');
    const record = resolveLineage({ name: 'fenced', id: 'tok-1' }, undefined, new Date()).record;
    await objects.state.write(record);
    expect(await objects.state.read('fenced')).toEqual(record);
    // Another process writes the record in between.
    const other = kubernetesStateObjects(client(), 'token-rotator');
    await other.state.read('fenced');
    await other.state.write({ ...record, currentId: 'tok-other' });
    await expect(objects.state.write({ ...record, currentId: 'tok-mine' })).rejects.toMatchObject({
      code: 'ERR_STATE',
      message: expect.stringContaining('changed since this process read it'),
    });
    expect((await other.state.read('fenced'))!.currentId).toBe('tok-other');
  });

  it('goes on when only the metadata moved (a label added by hand): the data it read is still there', async () => {
    const { resolveLineage } = await import('../../src/state/lineage.js');
    const objects = kubernetesStateObjects(client(), 'token-rotator');
    const record = resolveLineage({ name: 'labelled', id: 'tok-1' }, undefined, new Date()).record;
    await objects.state.write(record);
    const stored = k.double.objects.get('secrets', 'token-rotator', stateObjectName('labelled'))!;
    k.double.objects.put({
      ...stored,
      metadata: { ...(stored.metadata as object), labels: { ...(stored.metadata as { labels: object }).labels, team: 'ops' } },
    });
    await objects.state.write({ ...record, currentId: 'tok-2' });
    expect((await objects.state.read('labelled'))!.currentId).toBe('tok-2');
    expect(
      (k.double.objects.get('secrets', 'token-rotator', stateObjectName('labelled'))!.metadata as { labels: Record<string, string> }).labels
        .team,
    ).toBe('ops');
  });

  it('deletes the Secret when a name has neither record nor journal entry left', async () => {
    const objects = kubernetesStateObjects(client(), 'token-rotator');
    await objects.journal.write(intent('passing'));
    expect(await objects.journal.names()).toContain('passing');
    await objects.journal.erase('passing');
    expect(k.double.objects.get('secrets', 'token-rotator', stateObjectName('passing'))).toBeUndefined();
    expect(await objects.journal.names()).not.toContain('passing');
  });
});

describe('the kubernetes state backend reads named objects only', () => {
  it('never LISTs: every state object, Lease and journal index is read by its name', async () => {
    const { resolveLineage } = await import('../../src/state/lineage.js');
    const backend = await openStateBackend('kubernetes', {
      dir,
      env: { ...k.env, ROTATOR_STATE_NAMESPACE: 'token-rotator' },
      clock: systemClock,
      logger: silentLogger(),
    });
    const lock = await backend.locks.acquire('listless', { waitMs: 0 });
    if (!('held' in lock)) throw new Error('expected the lock');
    await backend.journal.write(intent('listless'));
    await backend.state.write(resolveLineage({ name: 'listless', id: 'tok-1' }, undefined, new Date()).record);
    expect(await backend.journal.names()).toContain('listless');
    await backend.journal.erase('listless');
    expect(await backend.journal.names()).not.toContain('listless');
    await lock.held.release();
    // Everything this file did so far (the whole StateBackend contract, crashes and takeovers, when run in full) and this.
    expect(k.double.requests.filter((r) => r.verb === 'list')).toEqual([]);
    expect(k.double.requests.filter((r) => r.path.includes('/token-rotator-state-index')).length).toBeGreaterThan(0);
  });

  it('finds the names with an unfinished rotation through its index, also when many start at once', async () => {
    k.double.objects.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'indexed' } });
    const names = Array.from({ length: 12 }, (_, i) => `name-${i}`);
    // A process per name, as a daemon's lanes or several CronJob pods would be.
    await Promise.all(names.map((name) => kubernetesStateObjects(client(), 'indexed').journal.write(intent(name))));
    const objects = kubernetesStateObjects(client(), 'indexed');
    expect((await objects.journal.names()).sort()).toEqual([...names].sort());
    await Promise.all(names.slice(0, 6).map((name) => kubernetesStateObjects(client(), 'indexed').journal.erase(name)));
    expect((await objects.journal.names()).sort()).toEqual(names.slice(6).sort());
    const index = k.double.objects.get('secrets', 'indexed', 'token-rotator-state-index')!;
    expect((index.metadata as { labels: Record<string, string> }).labels).toEqual({
      'app.kubernetes.io/managed-by': 'token-rotator',
      [ROLE_LABEL]: 'index',
    });
    expect(JSON.parse(Buffer.from((index.data as { names: string }).names, 'base64').toString('utf8'))).toEqual(names.slice(6).sort());
  });

  it("batches one process's index changes: many names starting at once update it in a few writes", async () => {
    k.double.objects.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'batched' } });
    const names = Array.from({ length: 30 }, (_, i) => `lane-${i}`);
    const objects = kubernetesStateObjects(client(), 'batched');
    const before = k.double.requests.length;
    await Promise.all(names.map((name) => objects.journal.write(intent(name))));
    expect((await objects.journal.names()).sort()).toEqual([...names].sort());
    const writes = k.double.requests.slice(before).filter((r) => r.method !== 'GET' && r.path.endsWith('/token-rotator-state-index'));
    expect(writes.length).toBeGreaterThan(0);
    expect(writes.length).toBeLessThan(names.length / 2);
    expect(writes.filter((r) => r.status === 409)).toEqual([]);
  });

  it('says what to check, never to delete, when a state object belongs to another name', async () => {
    const { resolveLineage } = await import('../../src/state/lineage.js');
    const objects = kubernetesStateObjects(client(), 'token-rotator');
    await objects.journal.write(intent('owned'));
    await objects.state.write(resolveLineage({ name: 'owned', id: 'tok-1' }, undefined, new Date()).record);
    // What a sink of another token did to it: its own annotation written over the owner's.
    const stored = k.double.objects.get('secrets', 'token-rotator', stateObjectName('owned'))!;
    const metadata = stored.metadata as { annotations: Record<string, string> };
    k.double.objects.put({
      ...stored,
      metadata: { ...metadata, annotations: { ...metadata.annotations, [TOKEN_NAME_ANNOTATION]: 'intruder' } },
    });
    const error = (await kubernetesStateObjects(client(), 'token-rotator')
      .journal.read('owned')
      .catch((e: unknown) => e)) as Error;
    expect(error).toMatchObject({ code: 'ERR_STATE' });
    expect(error.message).toMatch(/is not the state of 'owned'.*"intruder"/);
    expect(error.message).toMatch(/Do not delete it: its "journal" key may hold the only copy of a new secret of 'owned'/);
    expect(error.message).toContain(
      `kubectl annotate --overwrite secret -n token-rotator ${stateObjectName('owned')} ${TOKEN_NAME_ANNOTATION}=owned`,
    );
    expect(error.message).not.toMatch(/aside|kubectl delete/);
    // Nothing was written to it.
    expect(k.double.objects.get('secrets', 'token-rotator', stateObjectName('owned'))!.data).toEqual(stored.data);
  });
});

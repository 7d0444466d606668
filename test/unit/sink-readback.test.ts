import { describe, expect, it } from 'vitest';

import { SinkError } from '../../src/errors.js';
import { fingerprintsOf } from '../../src/policy/fingerprint.js';
import { lineageFor, reclaimRecorded, type SinkSnapshot, snapshotSinks } from '../../src/rotation/assess-token.js';
import { Secret } from '../../src/secret.js';
import { resolveLineage } from '../../src/state/lineage.js';
import type { StateRecord } from '../../src/state/state-record.js';
import { newStateKey, testPolicy } from '../fakes/fake-deps.js';
import { scriptedSink, ScriptedSinks } from '../fakes/scripted-sinks.js';

const now = new Date('2026-11-22T12:00:00.000Z');
const abortError = () => Object.assign(new Error('This operation was aborted'), { name: 'AbortError' });

function readDeps(sinks: ScriptedSinks, stateKey = newStateKey()) {
  return { sinks: sinks.set(), stateKey, previousStateKeys: [] };
}

/** A record that says this name delivered to `targets`. */
function recordDelivering(name: string, targets: string[]): StateRecord {
  const { record } = resolveLineage({ name, id: 'tok-1' }, undefined, now);
  return {
    ...record,
    sinks: Object.fromEntries(targets.map((t) => [t, { fingerprint: 'hmac-sha256:x', at: now.toISOString(), how: 'delivered' as const }])),
  };
}

describe('reading a name’s sinks back: what each holds, and what it says of the token', () => {
  it('a sink holding a secret: present, by the secret’s fingerprints under the run’s keys, kept aside for adoption', async () => {
    const sinks = new ScriptedSinks().put('a', { secret: 'xaat-c4n4ry-held-in-a' });
    const deps = readDeps(sinks);
    const snapshot = await snapshotSinks(testPolicy({ name: 'ingest', id: 'tok-1', sinks: [scriptedSink('a')] }), deps);
    expect(snapshot.readings).toEqual([
      {
        target: 'scripted:a',
        sink: 'scripted a',
        state: 'present',
        fingerprints: fingerprintsOf(new Secret('xaat-c4n4ry-held-in-a'), { current: deps.stateKey, previous: [] }),
      },
    ]);
    expect(snapshot.contents.get('scripted:a')?.reveal()).toBe('xaat-c4n4ry-held-in-a');
    expect(snapshot.metas).toEqual([]);
  });

  it('content with no secret its format can find: present with no fingerprint, nothing kept to adopt', async () => {
    const sinks = new ScriptedSinks().put('a', {});
    const snapshot = await snapshotSinks(testPolicy({ name: 'ingest', id: 'tok-1', sinks: [scriptedSink('a')] }), readDeps(sinks));
    expect(snapshot.readings).toEqual([{ target: 'scripted:a', sink: 'scripted a', state: 'present', fingerprints: [] }]);
    expect(snapshot.contents.size).toBe(0);
  });

  it('an empty sink is missing; a write-only one is unchecked, and never read', async () => {
    const sinks = new ScriptedSinks().put('program', { secret: 'xaat-c4n4ry-never-read' });
    const policy = testPolicy({
      name: 'ingest',
      id: 'tok-1',
      sinks: [scriptedSink('empty'), scriptedSink('program', { writeOnly: true })],
    });
    const snapshot = await snapshotSinks(policy, readDeps(sinks));
    expect(snapshot.readings).toEqual([
      { target: 'scripted:empty', sink: 'scripted empty', state: 'missing' },
      { target: 'scripted:program', sink: 'scripted program', state: 'unchecked' },
    ]);
    expect(sinks.reads.map((r) => r.key)).toEqual(['empty']);
  });

  it('another writer’s content (no marker of ours) is unowned, with the sink’s reason; its content is not adopted', async () => {
    const sinks = new ScriptedSinks().put('k8s', { secret: 'xaat-c4n4ry-someone-elses', ours: false });
    const policy = testPolicy({ name: 'ingest', id: 'tok-1', sinks: [scriptedSink('k8s', { marked: true })] });
    const snapshot = await snapshotSinks(policy, readDeps(sinks));
    expect(snapshot.readings).toEqual([
      { target: 'scripted:k8s', sink: 'scripted k8s', state: 'unowned', reason: expect.stringContaining('no marker of token-rotator') },
    ]);
    expect(snapshot.contents.size).toBe(0);
  });

  it('metadata naming another token: refused (unowned, naming it) unless the policy adopts it; adopted, it is that token’s, never this one’s', async () => {
    const meta = { name: 'billing', id: 'tok-b', rotatedAt: '2026-11-01T00:00:00.000Z' };
    const sinks = new ScriptedSinks()
      .put('shared', { secret: 'xaat-c4n4ry-billing', meta })
      .put('taken', { secret: 'xaat-c4n4ry-billing', meta });
    const policy = testPolicy({
      name: 'ingest',
      id: 'tok-1',
      sinks: [scriptedSink('shared', { marked: true }), scriptedSink('taken', { adopt: true })],
    });
    const snapshot = await snapshotSinks(policy, readDeps(sinks));
    expect(snapshot.readings).toEqual([
      {
        target: 'scripted:shared',
        sink: 'scripted shared',
        state: 'unowned',
        reason: expect.stringContaining('"billing"'),
        otherToken: 'billing',
      },
      { target: 'scripted:taken', sink: 'scripted taken', state: 'present', fingerprints: [], heldFor: 'billing' },
    ]);
    expect(snapshot.contents.size, 'another token’s secret is never taken for this one’s').toBe(0);
    expect(snapshot.metas, 'nor its metadata for this name’s').toEqual([]);
  });

  it('only metadata written for this name says which token it is', async () => {
    const ours = { name: 'ingest', id: 'tok-7', rotatedAt: '2026-11-20T00:00:00.000Z' };
    const sinks = new ScriptedSinks()
      .put('a', { secret: 'xaat-c4n4ry-a', meta: ours })
      .put('b', { secret: 'xaat-c4n4ry-b', meta: { id: 'tok-x' } });
    const policy = testPolicy({ name: 'ingest', id: 'tok-1', sinks: [scriptedSink('a'), scriptedSink('b')] });
    const snapshot = await snapshotSinks(policy, readDeps(sinks));
    expect(snapshot.metas).toEqual([ours]);
    expect(snapshot.readings.map((r) => r.state)).toEqual(['present', 'present']);
  });

  it('a sink that cannot be read is noted, never fatal; an abort (the stop’s deadline) is not swallowed', async () => {
    const sinks = new ScriptedSinks()
      .failReads('down', new SinkError('cannot read scripted down: unreachable'))
      .put('up', { secret: 'xaat-c4n4ry-up' });
    const policy = testPolicy({ name: 'ingest', id: 'tok-1', sinks: [scriptedSink('down'), scriptedSink('up')] });
    const snapshot = await snapshotSinks(policy, readDeps(sinks));
    expect(snapshot.readings[0]).toEqual({
      target: 'scripted:down',
      sink: 'scripted down',
      state: 'unreadable',
      error: 'cannot read scripted down: unreachable',
    });
    expect(snapshot.readings[1]).toMatchObject({ state: 'present' });

    const aborted = new ScriptedSinks().failReads('down', abortError());
    await expect(snapshotSinks(policy, readDeps(aborted))).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('a thrown non-error is an unreadable sink too', async () => {
    const sinks = new ScriptedSinks().failReads('odd', null as unknown as Error);
    const snapshot = await snapshotSinks(testPolicy({ name: 'ingest', id: 'tok-1', sinks: [scriptedSink('odd')] }), readDeps(sinks));
    expect(snapshot.readings).toEqual([{ target: 'scripted:odd', sink: 'scripted odd', state: 'unreadable', error: 'null' }]);
  });

  it('the stop’s signal goes with every read, so a hung sink is given up at the deadline', async () => {
    const sinks = new ScriptedSinks().put('a', { secret: 'xaat-c4n4ry-a' });
    const controller = new AbortController();
    await snapshotSinks(testPolicy({ name: 'ingest', id: 'tok-1', sinks: [scriptedSink('a')] }), readDeps(sinks), controller.signal);
    expect(sinks.reads).toEqual([{ key: 'a', adopt: undefined, signal: true }]);
    controller.abort(abortError());
    await expect(
      snapshotSinks(testPolicy({ name: 'ingest', id: 'tok-1', sinks: [scriptedSink('a')] }), readDeps(sinks), controller.signal),
    ).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('a destination the record says this name delivered to is ours, whatever its marker says now', () => {
  const marked = (key: string) => scriptedSink(key, { marked: true });
  const policy = testPolicy({ name: 'ingest', id: 'tok-1', sinks: [marked('k8s'), marked('other')] });

  it('read again as ours: present, marked as having lost its marker (why), its content kept for adoption', async () => {
    const sinks = new ScriptedSinks()
      .put('k8s', { secret: 'xaat-c4n4ry-recreated-by-hand', ours: false })
      .put('other', { secret: 'xaat-c4n4ry-o', ours: false });
    const deps = readDeps(sinks);
    const read = await snapshotSinks(policy, deps);
    const record = recordDelivering('ingest', ['scripted:k8s']);
    const controller = new AbortController();
    const snapshot = await reclaimRecorded(policy, deps, read, record, controller.signal);
    expect(snapshot.readings).toEqual([
      {
        target: 'scripted:k8s',
        sink: 'scripted k8s',
        state: 'present',
        fingerprints: fingerprintsOf(new Secret('xaat-c4n4ry-recreated-by-hand'), { current: deps.stateKey, previous: [] }),
        markerLost: 'it has no marker of token-rotator',
      },
      // Never delivered to: still another writer's.
      read.readings[1],
    ]);
    expect(snapshot.contents.get('scripted:k8s')?.reveal()).toBe('xaat-c4n4ry-recreated-by-hand');
    expect(read.contents.size, 'the first snapshot is left as it was').toBe(0);
    expect(sinks.reads.at(-1), 'read again through the claimed config, with the signal').toEqual({ key: 'k8s', adopt: true, signal: true });
    expect(sinks.reads.filter((r) => r.key === 'other')).toHaveLength(1);
  });

  it('with no record of deliveries, or nothing unowned, the snapshot is taken as it is: nothing read again', async () => {
    const sinks = new ScriptedSinks().put('k8s', { secret: 'xaat-c4n4ry-x', ours: false }).put('other', { secret: 'xaat-c4n4ry-y' });
    const deps = readDeps(sinks);
    const read = await snapshotSinks(policy, deps);
    const reads = sinks.reads.length;
    expect(await reclaimRecorded(policy, deps, read, undefined)).toBe(read);
    const { sinks: _none, ...noSinks } = recordDelivering('ingest', []);
    expect(await reclaimRecorded(policy, deps, read, noSinks)).toBe(read);
    expect(await reclaimRecorded(policy, deps, read, recordDelivering('ingest', ['scripted:other']))).toBe(read);
    expect(sinks.reads).toHaveLength(reads);
  });

  it('a destination naming another token is never reclaimed by this name’s record', async () => {
    const sinks = new ScriptedSinks().put('k8s', { secret: 'xaat-c4n4ry-billing', meta: { name: 'billing' }, ours: true });
    const deps = readDeps(sinks);
    const read = await snapshotSinks(policy, deps);
    expect(read.readings[0]).toMatchObject({ state: 'unowned', otherToken: 'billing' });
    const snapshot = await reclaimRecorded(policy, deps, read, recordDelivering('ingest', ['scripted:k8s']));
    expect(snapshot).toBe(read);
  });

  it('read again, it may be gone, name another token by now, or fail; an abort is not swallowed', async () => {
    const record = recordDelivering('ingest', ['scripted:k8s']);
    const cases: Array<[string, (s: ScriptedSinks) => ScriptedSinks, unknown]> = [
      ['gone', (s) => s.thenPut('k8s', undefined), { target: 'scripted:k8s', sink: 'scripted k8s', state: 'missing' }],
      [
        'another token',
        (s) => s.thenPut('k8s', { secret: 'xaat-c4n4ry-billing', meta: { name: 'billing' }, ours: false }),
        {
          target: 'scripted:k8s',
          sink: 'scripted k8s',
          state: 'unowned',
          reason: expect.stringContaining('"billing"'),
          otherToken: 'billing',
        },
      ],
    ];
    for (const [, script, expected] of cases) {
      const sinks = script(new ScriptedSinks().put('k8s', { secret: 'xaat-c4n4ry-x', ours: false }));
      const deps = readDeps(sinks);
      const snapshot = await reclaimRecorded(policy, deps, await snapshotSinks(policy, deps), record);
      expect(snapshot.readings[0]).toEqual(expected);
      expect(snapshot.contents.size).toBe(0);
    }

    const failing = new ScriptedSinks().put('k8s', { secret: 'xaat-c4n4ry-x', ours: false });
    const deps = readDeps(failing);
    const read = await snapshotSinks(policy, deps);
    failing.failReads('k8s', new SinkError('cannot read scripted k8s: forbidden'));
    expect((await reclaimRecorded(policy, deps, read, record)).readings[0]).toEqual({
      target: 'scripted:k8s',
      sink: 'scripted k8s',
      state: 'unreadable',
      error: 'cannot read scripted k8s: forbidden',
    });
    failing.failReads('k8s', null as unknown as Error);
    expect((await reclaimRecorded(policy, deps, read, record)).readings[0]).toMatchObject({ state: 'unreadable', error: 'null' });
    failing.failReads('k8s', abortError());
    await expect(reclaimRecorded(policy, deps, read, record)).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('which token a name means when the state has no record of it', () => {
  const policy = testPolicy({ name: 'ingest', id: 'tok-0', sinks: [] });
  const snapshotOf = (metas: SinkSnapshot['metas']): SinkSnapshot => ({ readings: [], metas, contents: new Map() });

  it('the newest rotation the sinks know of wins, whatever order they are read in', () => {
    const metas = [
      { name: 'ingest', id: 'tok-1', rotatedAt: '2026-10-01T00:00:00.000Z' },
      { name: 'ingest', id: 'tok-3', rotatedAt: '2026-11-20T00:00:00.000Z' },
      { name: 'ingest', id: 'tok-2', rotatedAt: '2026-11-01T00:00:00.000Z' },
      { name: 'ingest', id: 'tok-unknown-time' },
    ];
    for (const order of [metas, [...metas].reverse(), [metas[1]!, metas[0]!, metas[3]!, metas[2]!]]) {
      const lineage = lineageFor(policy, undefined, snapshotOf(order), now);
      expect(lineage.adopted).toBe('recovered');
      expect(lineage.record.currentId).toBe('tok-3');
      expect(lineage.record.lastRotatedAt).toBe('2026-11-20T00:00:00.000Z');
      expect(
        lineage.record.lineage.map((l) => l.id),
        'the policy’s id is an ancestor',
      ).toEqual(['tok-0']);
    }
  });

  it('a rotation time beats none', () => {
    for (const order of [
      [{ id: 'tok-undated' }, { id: 'tok-dated', rotatedAt: '2026-11-20T00:00:00.000Z' }],
      [{ id: 'tok-dated', rotatedAt: '2026-11-20T00:00:00.000Z' }, { id: 'tok-undated' }],
    ]) {
      expect(lineageFor(policy, undefined, snapshotOf(order), now).record.currentId).toBe('tok-dated');
    }
  });

  it('ids that cannot be token ids are ignored; metadata with none leaves the policy’s id', () => {
    const lineage = lineageFor(
      policy,
      undefined,
      snapshotOf([
        { id: '../admin', rotatedAt: '2026-11-21T00:00:00.000Z' },
        { rotatedAt: '2026-11-21T00:00:00.000Z' },
        { id: 'tok-5', rotatedAt: '2026-01-01T00:00:00.000Z' },
      ]),
      now,
    );
    expect(lineage.record.currentId).toBe('tok-5');
    expect(lineageFor(policy, undefined, snapshotOf([]), now)).toMatchObject({ adopted: 'new', record: { currentId: 'tok-0' } });
  });

  it('sinks naming the policy’s own id: a first sight, not a recovery', () => {
    const lineage = lineageFor(policy, undefined, snapshotOf([{ id: 'tok-0', rotatedAt: '2026-11-20T00:00:00.000Z' }]), now);
    expect(lineage).toMatchObject({ adopted: 'new', record: { currentId: 'tok-0', lastRotatedAt: null } });
  });

  it('with a record, the record decides, whatever the sinks say', () => {
    const { record } = resolveLineage({ name: 'ingest', id: 'tok-0' }, undefined, now);
    const lineage = lineageFor(policy, record, snapshotOf([{ id: 'tok-9', rotatedAt: '2026-11-21T00:00:00.000Z' }]), now);
    expect(lineage).toEqual({ record, adopted: undefined });
  });
});

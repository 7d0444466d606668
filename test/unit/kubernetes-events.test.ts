import { describe, expect, it } from 'vitest';

import type { TokenPolicy } from '../../src/config/types.js';
import { EventSeriesCache, NOTE_LENGTH_LIMIT } from '../../src/kubernetes/events/event-series.js';
import { eventsForOutcome, recordsEvents } from '../../src/notify/kubernetes-events.js';
import type { TokenOutcome } from '../../src/rotation/outcome.js';

const SINK = 'kubernetes-secret apps/ingest-token[token]';
const token = {
  name: 'ingest',
  sinks: [
    { type: 'kubernetes-secret', name: 'ingest-token', namespace: 'apps', key: 'token' },
    { type: 'file', path: 'ingest.token' },
  ],
  reload: [{ type: 'rollout', kind: 'Deployment', namespace: 'apps', workload: { name: 'ingest-api' } }],
} as unknown as TokenPolicy;

const outcome = (over: Partial<TokenOutcome>): TokenOutcome => ({
  name: 'ingest',
  action: 'rotated',
  reason: 'expires soon',
  oldId: 'tok-1',
  expiresAt: null,
  newId: 'tok-2',
  sinks: [{ sink: SINK, result: 'updated' }],
  orphans: [],
  ...over,
});

const summary = (o: TokenOutcome) =>
  eventsForOutcome(o, token).map((e) => `${e.type} ${e.reason} ${e.action} ${e.regarding.kind}/${e.regarding.name}`);

describe('the Kubernetes Events of an outcome', () => {
  it('gives each outcome its reason, on the Secret, and on the restarted workload', () => {
    expect(summary(outcome({ reloads: [{ target: 'Deployment apps/ingest-api', result: 'restarted' }] }))).toEqual([
      'Normal Rotated Rotate Secret/ingest-token',
      'Normal RolloutRestarted Restart Deployment/ingest-api',
    ]);
    expect(summary(outcome({ action: 'redelivered', newId: undefined }))).toEqual(['Normal Repaired Redeliver Secret/ingest-token']);
    // A redelivery that did not write this Secret did not repair it.
    expect(summary(outcome({ action: 'redelivered', sinks: [{ sink: SINK, result: 'unchanged' }] }))).toEqual([]);
    expect(summary(outcome({ action: 'failed', verification: { result: 'failed', check: 'probe', message: '401' } }))).toEqual([
      'Warning VerifyFailed Verify Secret/ingest-token',
    ]);
    expect(summary(outcome({ action: 'failed', stage: 'rotation', sinks: [{ sink: SINK, result: 'failed', error: 'refused' }] }))).toEqual([
      'Warning DeliveryFailed Deliver Secret/ingest-token',
    ]);
    expect(summary(outcome({ action: 'failed', stage: 'check', sinks: [] }))).toEqual([
      'Warning RotationRefused Rotate Secret/ingest-token',
    ]);
    expect(summary(outcome({ action: 'failed', stage: 'rotation', sinks: [] }))).toEqual([
      'Warning RotationFailed Rotate Secret/ingest-token',
    ]);
    expect(
      summary(
        outcome({
          reloads: [
            { target: 'Deployment apps/ingest-api', result: 'failed', message: 'forbidden' },
            { target: 'webhook X', result: 'notified' },
          ],
        }),
      ),
    ).toEqual(['Normal Rotated Rotate Secret/ingest-token', 'Warning RolloutRestartFailed Restart Deployment/ingest-api']);
    expect(summary(outcome({ action: 'skipped', sinks: [] }))).toEqual([]);
    expect(summary(outcome({ action: 'interrupted', sinks: [] }))).toEqual([]);
  });

  it('the restarted workload names the Secret as related', () => {
    const [, restart] = eventsForOutcome(outcome({ reloads: [{ target: 'Deployment apps/ingest-api', result: 'restarted' }] }), token);
    expect(restart).toMatchObject({
      regarding: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'apps', name: 'ingest-api' },
      related: { apiVersion: 'v1', kind: 'Secret', namespace: 'apps', name: 'ingest-token' },
    });
  });

  it('is asked for only by policies with a Kubernetes Secret sink or a rollout', () => {
    expect(recordsEvents([token])).toBe(true);
    expect(recordsEvents([{ ...token, sinks: [{ type: 'file', path: 'x' }], reload: [] } as unknown as TokenPolicy])).toBe(false);
  });
});

describe('the series of Events', () => {
  const intent = {
    regarding: { apiVersion: 'v1', kind: 'Secret', namespace: 'apps', name: 'x' },
    type: 'Normal' as const,
    reason: 'Rotated',
    action: 'Rotate',
    note: 'n',
  };

  it('names each new Event after its object and a time that never repeats, and cuts a long note as the API requires', () => {
    const cache = new EventSeriesCache('pod-1');
    const at = new Date('2026-03-01T10:00:00Z');
    const a = cache.next(intent, at);
    const b = cache.next({ ...intent, reason: 'Repaired' }, at);
    expect(a.event.metadata.name).toMatch(/^x\.[0-9a-f]+$/);
    expect(b.event.metadata.name).not.toBe(a.event.metadata.name);
    const long = cache.next({ ...intent, note: 'a'.repeat(2000) }, at);
    expect(long.event.note).toHaveLength(NOTE_LENGTH_LIMIT);
    expect(long.event.note.endsWith('...')).toBe(true);
  });
});

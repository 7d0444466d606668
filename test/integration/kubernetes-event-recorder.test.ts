import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { fixedClock } from '../../src/clock.js';
import { createKubernetesClient } from '../../src/kubernetes/client.js';
import { resolveConnection } from '../../src/kubernetes/connection.js';
import { createEventRecorder } from '../../src/kubernetes/events/event-recorder.js';
import { SERIES_FINISH_MS } from '../../src/kubernetes/events/event-series.js';
import type { EventIntent } from '../../src/kubernetes/events/event-types.js';
import { eventsForOutcome } from '../../src/notify/kubernetes-events.js';
import type { TokenOutcome } from '../../src/rotation/outcome.js';
import { Secret } from '../../src/secret.js';
import { silentLogger } from '../fakes/fake-deps.js';
import { type KubernetesHere, kubernetesHere } from '../helpers/kubernetes.js';
import { modelProblems } from '../helpers/kubernetes-models.js';
import { rawLog } from '../helpers/raw-log.js';
import { makeTempDir } from '../helpers/temp-dir.js';

type Json = Record<string, unknown>;

let k: KubernetesHere;
beforeAll(async () => {
  k = await kubernetesHere(await makeTempDir(), { namespaces: ['apps', 'token-rotator'] });
});
afterAll(async () => {
  await k.double.close();
});

const client = () => Promise.resolve(createKubernetesClient(resolveConnection(k.env)!, { logger: silentLogger() }));
const events = () => k.double.objects.list('events', 'apps') as Json[];
const rotated = (note = "token 'ingest' rotated: tok-1 -> tok-2"): EventIntent => ({
  regarding: { apiVersion: 'v1', kind: 'Secret', namespace: 'apps', name: 'ingest-token' },
  type: 'Normal',
  reason: 'Rotated',
  action: 'Rotate',
  note,
});

describe('the Kubernetes Event recorder, against the API double', () => {
  beforeEach(() => {
    for (const event of events()) k.double.objects.delete('events', 'apps', (event.metadata as Json).name as string);
    k.double.forbidden.length = 0;
    k.double.requests.length = 0;
  });

  it('creates an events.k8s.io/v1 Event as client-go does, and folds a repeat into a series patched in place', async () => {
    const clock = fixedClock('2026-03-01T10:00:00.123Z');
    const recorder = createEventRecorder({ client, logger: silentLogger(), clock, reportingInstance: 'rotator-7d9f' });
    await recorder.record(rotated());
    expect(events()).toHaveLength(1);
    expect(events()[0]).toMatchObject({
      metadata: { name: expect.stringMatching(/^ingest-token\.[0-9a-f]+$/), namespace: 'apps' },
      eventTime: '2026-03-01T10:00:00.123000Z',
      reportingController: 'token-rotator',
      reportingInstance: 'rotator-7d9f',
      action: 'Rotate',
      reason: 'Rotated',
      type: 'Normal',
      regarding: { apiVersion: 'v1', kind: 'Secret', namespace: 'apps', name: 'ingest-token' },
      note: "token 'ingest' rotated: tok-1 -> tok-2",
    });
    expect(events()[0]).not.toHaveProperty('series');
    // As kubernetes-models (the API's OpenAPI schema) reads it: no field unknown, none of the wrong type.
    expect(await modelProblems({ apiVersion: 'events.k8s.io/v1', kind: 'Event', ...events()[0] })).toEqual([]);

    clock.advance(60_000);
    await recorder.record(rotated());
    clock.advance(60_000);
    await recorder.record(rotated());
    expect(events()).toHaveLength(1);
    expect(events()[0]).toMatchObject({ series: { count: 3, lastObservedTime: '2026-03-01T10:02:00.123000Z' } });
    expect(await modelProblems({ apiVersion: 'events.k8s.io/v1', kind: 'Event', ...events()[0] })).toEqual([]);
    const writes = k.double.requests.filter((r) => r.method !== 'GET');
    expect(writes.map((r) => [r.verb, r.contentType])).toEqual([
      ['create', 'application/json'],
      ['patch', 'application/strategic-merge-patch+json'],
      ['patch', 'application/strategic-merge-patch+json'],
    ]);

    // Another note is another Event; so is the same one after the series has finished.
    await recorder.record(rotated("token 'ingest' rotated: tok-2 -> tok-3"));
    clock.advance(SERIES_FINISH_MS + 1);
    await recorder.record(rotated());
    expect(events()).toHaveLength(3);
  });

  it("names the regarding object's uid when it can read it, as kubectl describe looks Events up by it", async () => {
    const secret = k.double.objects.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'ingest-token', namespace: 'apps' } });
    try {
      const recorder = createEventRecorder({ client, logger: silentLogger(), clock: fixedClock('2026-03-01T10:00:00Z') });
      await recorder.record(rotated());
      expect(events()[0]).toMatchObject({ regarding: { name: 'ingest-token', uid: (secret.metadata as Json).uid } });
    } finally {
      k.double.objects.delete('secrets', 'apps', 'ingest-token');
    }
  });

  it('creates the Event again when the one its series patches is gone', async () => {
    const recorder = createEventRecorder({ client, logger: silentLogger(), clock: fixedClock('2026-03-01T10:00:00Z') });
    await recorder.record(rotated());
    k.double.objects.delete('events', 'apps', (events()[0]!.metadata as Json).name as string);
    await recorder.record(rotated());
    expect(events()).toHaveLength(1);
    expect(events()[0]).toMatchObject({ series: { count: 2 } });
  });

  it('never fails or throws for a refused Event (403): warns once, then only at debug', async () => {
    k.double.forbidden.push({ verb: 'create', resource: 'events', namespace: 'apps' });
    const log = rawLog();
    const recorder = createEventRecorder({ client, logger: log.logger, clock: fixedClock('2026-03-01T10:00:00Z') });
    await expect(recorder.record(rotated())).resolves.toBeUndefined();
    await expect(recorder.record(rotated('another note'))).resolves.toBeUndefined();
    expect(events()).toEqual([]);
    const lines = log.lines.map((l) => JSON.parse(l) as { level: number; msg: string });
    const refusals = lines.filter((l) => l.msg.includes('may not create events'));
    expect(refusals.map((l) => l.level)).toEqual([40, 20]);
    expect(refusals[0]!.msg).toContain('ROTATOR_KUBERNETES_EVENTS=off');
  });

  it('gives up on an API server that does not answer, within its bounded wait', async () => {
    const { createServer } = await import('node:http');
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    const log = rawLog();
    const connection = { ...resolveConnection(k.env)!, server: new URL(`http://127.0.0.1:${port}`) };
    const recorder = createEventRecorder({
      client: () => Promise.resolve(createKubernetesClient(connection, { logger: silentLogger() })),
      logger: log.logger,
      clock: fixedClock('2026-03-01T10:00:00Z'),
      waitMs: 200,
    });
    await expect(recorder.record(rotated())).resolves.toBeUndefined();
    silent.closeAllConnections();
    silent.close();
    expect(log.lines.join('')).toContain('no answer within 200 ms');
  });

  it('puts nothing secret in an Event: a canary in every text of an outcome is scrubbed', async () => {
    const canary = new Secret('canary-secret-4f1d9a7c2b');
    const outcome: TokenOutcome = {
      name: 'ingest',
      action: 'failed',
      stage: 'rotation',
      reason: `the service said ${canary.reveal()}`,
      oldId: 'tok-1',
      expiresAt: null,
      newId: 'tok-2',
      sinks: [{ sink: 'kubernetes-secret apps/ingest-token[token]', result: 'failed', error: `echoed ${canary.reveal()}` }],
      orphans: [],
      verification: { result: 'failed', check: 'probe', message: `probe answered ${canary.reveal()}` },
    };
    const token = {
      name: 'ingest',
      sinks: [{ type: 'kubernetes-secret', name: 'ingest-token', namespace: 'apps', key: 'token' }],
      reload: [],
    } as unknown as Parameters<typeof eventsForOutcome>[1];
    const intents = [
      ...eventsForOutcome(outcome, token),
      ...eventsForOutcome({ ...outcome, verification: undefined }, token),
      ...eventsForOutcome({ ...outcome, verification: undefined, stage: 'check', sinks: [] }, token),
    ];
    expect(intents.map((i) => i.reason)).toEqual(['VerifyFailed', 'DeliveryFailed', 'RotationRefused']);
    const recorder = createEventRecorder({ client, logger: silentLogger(), clock: fixedClock('2026-03-01T10:00:00Z') });
    for (const intent of intents) await recorder.record(intent);
    expect(events()).toHaveLength(3);
    expect(JSON.stringify(events())).not.toContain(canary.reveal());
  });
});

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { kubectlIn } from '../../../test/helpers/kubectl.js';
import { makeTempDir } from '../../../test/helpers/temp-dir.js';
import { type KubernetesDouble, startKubernetesDouble } from '../src/index.js';

type Json = Record<string, unknown>;

/**
 * Events in the double: events.k8s.io/v1 written and validated as the real API server does, and
 * the core v1 view of the same objects, which kubectl reads.
 */
describe('Kubernetes API double: Events', () => {
  let double: KubernetesDouble;
  let dir: string;
  const kubeconfig = () => join(dir, 'kubeconfig');

  beforeAll(async () => {
    double = await startKubernetesDouble({ namespaces: ['ci'] });
    dir = await makeTempDir('kubernetes-double-events-');
    await writeFile(kubeconfig(), double.kubeconfig(), { mode: 0o600 });
  });
  afterAll(async () => {
    await double?.close();
  });

  async function api(method: string, path: string, body?: unknown, contentType = 'application/json') {
    const response = await fetch(`${double.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${double.token}`, 'content-type': contentType },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, body: (await response.json()) as Json };
  }

  const EVENTS = '/apis/events.k8s.io/v1/namespaces/ci/events';
  const event = (name: string, extra: Json = {}): Json => ({
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name, namespace: 'ci' },
    eventTime: '2026-01-02T03:04:05.123456Z',
    reportingController: 'token-rotator',
    reportingInstance: 'rotator-0',
    action: 'Rotate',
    reason: 'Rotated',
    type: 'Normal',
    note: 'rotated token ingest',
    regarding: { apiVersion: 'v1', kind: 'Secret', namespace: 'ci', name: 'ingest-token' },
    ...extra,
  });

  it('creates an events.k8s.io/v1 Event and serves it in both views', async () => {
    const created = await api('POST', EVENTS, event('ingest-token.1'));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({
      kind: 'Event',
      apiVersion: 'events.k8s.io/v1',
      eventTime: '2026-01-02T03:04:05.123456Z',
      regarding: { kind: 'Secret', name: 'ingest-token' },
      deprecatedSource: {},
    });
    const core = await api('GET', '/api/v1/namespaces/ci/events/ingest-token.1');
    expect(core.status).toBe(200);
    expect(core.body).toMatchObject({
      kind: 'Event',
      apiVersion: 'v1',
      involvedObject: { kind: 'Secret', namespace: 'ci', name: 'ingest-token' },
      message: 'rotated token ingest',
      reason: 'Rotated',
      reportingComponent: 'token-rotator',
      reportingInstance: 'rotator-0',
      source: {},
      firstTimestamp: null,
      lastTimestamp: null,
      eventTime: '2026-01-02T03:04:05.123456Z',
    });
    expect(core.body).not.toHaveProperty('note');
    expect(core.body).not.toHaveProperty('regarding');
  });

  it('patches the series of an Event (strategic merge, as client-go does) and lists it by involvedObject', async () => {
    await api('POST', EVENTS, event('ingest-token.2', { reason: 'Repaired', note: 'redelivered' }));
    const patched = await api(
      'PATCH',
      `${EVENTS}/ingest-token.2`,
      { series: { count: 2, lastObservedTime: '2026-01-02T03:05:00.000000Z' } },
      'application/strategic-merge-patch+json',
    );
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.series).toEqual({ count: 2, lastObservedTime: '2026-01-02T03:05:00.000000Z' });
    const listed = await api(
      'GET',
      `/api/v1/namespaces/ci/events?fieldSelector=${encodeURIComponent('involvedObject.kind=Secret,involvedObject.name=ingest-token,reason=Repaired')}`,
    );
    expect(listed.status).toBe(200);
    expect((listed.body.items as Json[]).map((item) => (item.metadata as Json).name)).toEqual(['ingest-token.2']);
    expect((listed.body.items as Json[])[0]).toMatchObject({ series: { count: 2 }, message: 'redelivered' });
  });

  it('validates an Event as the API server does for events.k8s.io/v1', async () => {
    const refused = await api(
      'POST',
      EVENTS,
      event('bad', { reportingController: undefined, action: '', type: 'Loud', deprecatedCount: 3 }),
    );
    expect(refused.status).toBe(422);
    const causes = ((refused.body.details as Json).causes as Json[]).map((c) => `${String(c.field)}: ${String(c.reason)}`);
    expect(causes).toEqual(
      expect.arrayContaining([
        'reportingController: FieldValueRequired',
        'action: FieldValueRequired',
        'type: FieldValueInvalid',
        'count: FieldValueInvalid',
      ]),
    );
    expect(refused.body.message).toContain('type: Invalid value: "": has invalid value: Loud');

    // Without an eventTime the legacy rules apply (no reporting fields required), and the new API requires it.
    const timeless = await api('POST', EVENTS, event('timeless', { eventTime: undefined, action: '' }));
    expect(timeless.status).toBe(422);
    expect(String(timeless.body.message)).toBe('Event.events.k8s.io "timeless" is invalid: eventTime: Required value');

    const badSeries = await api('POST', EVENTS, event('bad-series', { series: { count: 1 } }));
    expect(badSeries.status).toBe(422);
    expect(String(badSeries.body.message)).toContain('series.count: Invalid value: "": should be at least 2');
    expect(String(badSeries.body.message)).toContain('series.lastObservedTime: Required value');

    const badTime = await api('POST', EVENTS, event('bad-time', { eventTime: '2026-01-02T03:04:05Z' }));
    expect(badTime.status).toBe(400);

    await api('POST', EVENTS, event('immutable'));
    const changed = await api('PATCH', `${EVENTS}/immutable`, { note: 'another' }, 'application/merge-patch+json');
    expect(changed.status).toBe(422);
    expect(String(changed.body.message)).toContain('message: Invalid value: "another": field is immutable');
  });

  it('the core view is read-only here', async () => {
    const posted = await api('POST', '/api/v1/namespaces/ci/events', { metadata: { name: 'x' } });
    expect(posted.status).toBe(405);
  });

  it('kubectl get events and kubectl events show them with their reasons', async () => {
    const listed = await kubectlIn(dir, kubeconfig(), 'get', 'events', '-n', 'ci');
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE/);
    expect(listed.stdout).toMatch(/Normal\s+Rotated\s+secret\/ingest-token\s+rotated token ingest/);
    expect(listed.stdout).toMatch(/Normal\s+Repaired\s+secret\/ingest-token\s+redelivered/);

    const wide = await kubectlIn(dir, kubeconfig(), 'get', 'events', '-n', 'ci', '-o', 'wide');
    expect(wide.stdout).toMatch(/token-rotator, rotator-0/);

    const forSecret = await kubectlIn(dir, kubeconfig(), 'events', '-n', 'ci', '--for', 'secret/ingest-token');
    expect(forSecret.code, forSecret.stderr).toBe(0);
    expect(forSecret.stdout).toMatch(/Normal\s+Repaired\s+Secret\/ingest-token\s+redelivered/);

    const grouped = await kubectlIn(dir, kubeconfig(), 'get', 'events.events.k8s.io', '-n', 'ci', '-o', 'name');
    expect(grouped.code, grouped.stderr).toBe(0);
    expect(grouped.stdout).toContain('event.events.k8s.io/ingest-token.1');
  });
});

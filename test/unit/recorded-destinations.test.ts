import { describe, expect, it } from 'vitest';

import { asRecorded } from '../../src/rotation/recorded-destinations.js';
import { resolveLineage } from '../../src/state/lineage.js';
import type { StateRecord } from '../../src/state/state-record.js';
import { scriptedSink, ScriptedSinks } from '../fakes/scripted-sinks.js';

const now = new Date('2026-11-22T12:00:00.000Z');
const deps = { sinks: new ScriptedSinks().set() };
const fresh = resolveLineage({ name: 'ingest', id: 'tok-1' }, undefined, now).record;
const delivered = (...targets: string[]): StateRecord => ({
  ...fresh,
  sinks: Object.fromEntries(targets.map((t) => [t, { fingerprint: 'hmac-sha256:x', at: now.toISOString(), how: 'delivered' as const }])),
});

describe('a destination this name delivered to before is ours, whatever its marker says now', () => {
  it('one the record lists is claimed: taken over (adopt) for its reads, preflights and writes', () => {
    const config = scriptedSink('k8s', { marked: true });
    expect(asRecorded(config, deps, delivered('scripted:k8s'))).toMatchObject({ key: 'k8s', adopt: true });
  });

  it('one the record does not list, or with no record or no deliveries recorded, is left as the policy says', () => {
    const config = scriptedSink('k8s', { marked: true });
    expect(asRecorded(config, deps, delivered('scripted:other'))).toBe(config);
    expect(asRecorded(config, deps, undefined)).toBe(config);
    expect(asRecorded(config, deps, fresh)).toBe(config);
  });

  it('a sink type with no marker is the same config either way', () => {
    const config = scriptedSink('file');
    expect(asRecorded(config, deps, delivered('scripted:file'))).toEqual(config);
  });
});

import { describe, expect, it } from 'vitest';

import type { SinkReading } from '../../src/policy/sink-drift.js';
import { readingsWithoutKey } from '../../src/rotation/drift-without-key.js';

const present = (sink: string, extra: Partial<Extract<SinkReading, { state: 'present' }>> = {}): SinkReading => ({
  target: `file:/srv/${sink}`,
  sink,
  state: 'present',
  fingerprints: ['fp-1'],
  ...extra,
});

const keyed = { mac: 'mac-of-the-record', sinks: { 'file:/srv/a': { fingerprint: 'fp-1' } } } as never;

describe('readingsWithoutKey', () => {
  it('judges a sink holding content as unchecked when the record was written with a key, and names it', () => {
    const { readings, notCompared } = readingsWithoutKey([present('a')], keyed);
    expect(readings).toEqual([{ target: 'file:/srv/a', sink: 'a', state: 'unchecked' }]);
    expect(notCompared).toEqual(['a']);
  });

  it('keeps what needs no key: missing, unreadable, unowned, a lost marker, a secret held for another token, no secret found', () => {
    const kept: SinkReading[] = [
      { target: 'file:/srv/m', sink: 'm', state: 'missing' },
      { target: 'file:/srv/u', sink: 'u', state: 'unreadable', error: 'EACCES' },
      present('lost', { markerLost: 'edited by hand' }),
      present('held', { heldFor: 'other-token' }),
      present('empty', { fingerprints: [] }),
    ];
    const { readings, notCompared } = readingsWithoutKey(kept, keyed);
    expect(readings).toEqual(kept);
    expect(notCompared).toEqual([]);
  });

  it("hides a read program's own words, which may hold the current secret that cannot be masked without the key", () => {
    const failed: SinkReading = { target: 'exec:["read-it"]', sink: 'exec read-it', state: 'unreadable', error: 'exit 1: CANARY-current' };
    const other: SinkReading = { target: 'kubernetes-secret:apps/x', sink: 'x', state: 'unreadable', error: '403 forbidden' };
    const { readings } = readingsWithoutKey([failed, other], keyed);
    expect(readings[0]).toMatchObject({ state: 'unreadable', error: expect.stringContaining('ROTATOR_STATE_KEY') });
    expect(JSON.stringify(readings)).not.toContain('CANARY-current');
    expect(readings[1]).toEqual(other);
  });

  it('compares as always when the record has no MAC (written without a key), or no sinks, or there is no record', () => {
    const reading = [present('a')];
    for (const record of [{ sinks: {} } as never, { mac: 'mac' } as never, undefined]) {
      const { readings, notCompared } = readingsWithoutKey(reading, record);
      expect(readings).toEqual(reading);
      expect(readings).not.toBe(reading);
      expect(notCompared).toEqual([]);
    }
  });
});

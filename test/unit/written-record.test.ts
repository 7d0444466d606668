import { describe, expect, it } from 'vitest';

import { rememberingWrites } from '../../src/rotation/written-record.js';
import type { StateRecord } from '../../src/state/state-record.js';
import type { StateStore } from '../../src/state/state-store.js';

/** A state store over a map, whose writes and erases can be made to fail. */
function mapStore(fail: { write?: boolean; erase?: boolean } = {}) {
  const records = new Map<string, StateRecord>();
  const calls: string[] = [];
  const store: StateStore = {
    describe: () => 'the map',
    read: async (name) => records.get(name),
    async write(record) {
      calls.push(`write ${record.name}`);
      if (fail.write) throw new Error('disk full');
      records.set(record.name, record);
    },
    async erase(name) {
      calls.push(`erase ${name}`);
      if (fail.erase) throw new Error('read-only');
      records.delete(name);
    },
  };
  return { store, records, calls };
}

const record = (name: string, currentId: string) => ({ name, currentId }) as unknown as StateRecord;

describe('rememberingWrites: the state store as one rotation uses it', () => {
  it('reads, writes, erases and describes through the store underneath', async () => {
    const { store, records, calls } = mapStore();
    records.set('a', record('a', 'p1'));
    const { state } = rememberingWrites(store);
    expect(state.describe()).toBe('the map');
    expect(await state.read('a')).toEqual(record('a', 'p1'));
    await state.write(record('b', 'p2'));
    await state.erase('a');
    expect(calls).toEqual(['write b', 'erase a']);
    expect([...records.keys()]).toEqual(['b']);
  });

  it('remembers the last record written, and forgets it when an erase begins', async () => {
    const { store } = mapStore();
    const { state, lastWritten } = rememberingWrites(store);
    expect(lastWritten()).toBeUndefined();
    await state.write(record('a', 'p1'));
    await state.write(record('a', 'p2'));
    expect(lastWritten()).toEqual(record('a', 'p2'));
    await state.erase('a');
    expect(lastWritten()).toBeUndefined();
  });

  it('forgets what it wrote when a later write or erase fails: what is stored is then not known', async () => {
    const failing = { write: false, erase: false };
    const { store } = mapStore(failing);
    const { state, lastWritten } = rememberingWrites(store);
    await state.write(record('a', 'p1'));
    failing.write = true;
    await expect(state.write(record('a', 'p2'))).rejects.toThrow('disk full');
    expect(lastWritten()).toBeUndefined();
    failing.write = false;
    await state.write(record('a', 'p3'));
    failing.erase = true;
    await expect(state.erase('a')).rejects.toThrow('read-only');
    expect(lastWritten()).toBeUndefined();
  });
});

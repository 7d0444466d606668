import { describe, expect, it } from 'vitest';

import { StateError } from '../../src/errors.js';
import { resolveLineage } from '../../src/state/lineage.js';
import { stateBackendContract } from '../contracts/state-backend-contract.js';
import { MemoryStateStorage } from '../fakes/memory-state-backend.js';

stateBackendContract('memory', async () => {
  const storage = new MemoryStateStorage();
  return {
    backend: storage.open(),
    openView: async () => storage.open(),
    crash: async (view) => storage.crash(view),
    writeRaw: async (kind, name, text) => storage.writeRaw(kind, name, text),
    readRaw: async (kind, name) => storage.readRaw(kind, name),
  };
});

describe('the memory state backend, as a fake', () => {
  it('keeps what the shared codec makes of a record, so a value the file backend could not carry does not survive here either', async () => {
    const storage = new MemoryStateStorage();
    const view = storage.open();
    const record = resolveLineage({ name: 'alpha', id: 'tok-1' }, undefined, new Date('2026-11-22T12:00:00Z')).record;
    // A Date where the schema wants ISO text comes back as text, as JSON on disk would give it.
    await view.state.write({ ...record, adoptedAt: new Date('2026-11-22T12:00:00Z') as unknown as string });
    expect((await view.state.read('alpha'))!.adoptedAt).toBe('2026-11-22T12:00:00.000Z');
    // A field the schema does not know is written (as the file backend writes it) and refused when read.
    await view.state.write({ ...record, extra: true } as typeof record);
    await expect(view.state.read('alpha')).rejects.toBeInstanceOf(StateError);
  });

  it('gives each view its own process identity, which a busy lock names', async () => {
    const storage = new MemoryStateStorage();
    const [first, second] = [storage.open(), storage.open()];
    expect(first.process).not.toBe(second.process);
    await first.locks.acquire('alpha', { waitMs: 0 });
    expect(await second.locks.acquire('alpha', { waitMs: 0 })).toEqual({ busy: { who: first.process, since: expect.any(String) } });
    expect(storage.holderOf('alpha')).toBe(first.process);
  });
});

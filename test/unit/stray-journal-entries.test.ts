import { describe, expect, it } from 'vitest';

import { findStrayEntries } from '../../src/rotation/stray-entries.js';
import type { Journal } from '../../src/state/journal.js';
import { JOURNAL_VERSION, type JournalEntry } from '../../src/state/journal-entry.js';
import { testPolicy } from '../fakes/fake-deps.js';
import { MemoryStateStorage } from '../fakes/memory-state-backend.js';

const startedAt = '2026-11-22T12:00:00.000Z';
const intent = (name: string): JournalEntry => ({
  version: JOURNAL_VERSION,
  name,
  rotationId: `${name}-r1`,
  phase: 'intent',
  reason: 'due',
  startedAt,
  oldId: 'tok-1',
  oldExpiresAt: null,
  existingTokenExpiresAt: '2026-11-22T13:00:00.000Z',
  newTokenExpiresAt: null,
  delivered: [],
});
const staged = (name: string): JournalEntry => ({
  ...intent(name),
  phase: 'staged',
  staged: { newId: 'tok-2', newExpiresAt: null, stagedAt: startedAt, secret: { plain: 'xaat-c4n4ry-stray-staged' } },
});
const held = (name: string): JournalEntry => ({
  ...intent(name),
  phase: 'held',
  held: { problem: 'no id in the answer', heldAt: startedAt, secret: { plain: 'xaat-c4n4ry-stray-held' } },
});

const policyOf = (...names: string[]) => ({ tokens: names.map((name) => testPolicy({ name, id: `${name}-id`, sinks: [] })) });

async function journalWith(...entries: JournalEntry[]): Promise<{ journal: Journal; storage: MemoryStateStorage }> {
  const storage = new MemoryStateStorage();
  const { journal } = storage.open();
  for (const entry of entries) await journal.write(entry);
  return { journal, storage };
}

describe('unfinished rotations of names that left the policy', () => {
  it('entries of names in the policy are not strays', async () => {
    const { journal } = await journalWith(staged('kept'), intent('also-kept'));
    expect(await findStrayEntries(policyOf('kept', 'also-kept'), journal)).toEqual([]);
  });

  it('each stray says its name, what it holds, where it is, and that the name must come back or the entry be dealt with', async () => {
    const { journal } = await journalWith(intent('kept'), staged('gone-staged'), held('gone-held'), intent('gone-intent'));
    const strays = await findStrayEntries(policyOf('kept'), journal);
    expect(strays.map(({ name, phase }) => ({ name, phase }))).toEqual([
      { name: 'gone-staged', phase: 'staged' },
      { name: 'gone-held', phase: 'held' },
      { name: 'gone-intent', phase: 'intent' },
    ]);
    for (const stray of strays) {
      expect(stray.message).toContain(journal.describe(stray.name));
      expect(stray.message).toContain(`'${stray.name}' is no longer in the policy`);
    }
    const [stagedStray, heldStray, intentStray] = strays;
    expect(stagedStray!.message).toMatch(/holds a new secret \(staged\)/);
    expect(heldStray!.message).toMatch(/holds a new secret \(held\)/);
    expect(intentStray!.message).not.toMatch(/holds a new secret/);
    expect(intentStray!.message).toMatch(/\(intent\)/);
  });

  it('an entry that cannot be read is a stray all the same: why it cannot be read, and that it may hold a secret', async () => {
    const { journal, storage } = await journalWith();
    storage.writeRaw('journal', 'damaged', '{ not json');
    const [stray] = await findStrayEntries(policyOf(), journal);
    expect(stray).toMatchObject({ name: 'damaged', phase: 'unreadable' });
    expect(stray!.message).toMatch(/cannot be read \(.+\); it may hold a new secret/);
    expect(stray!.message).toContain(journal.describe('damaged'));
  });

  it('an entry gone between listing and reading is reported as unreadable, not as holding a secret', async () => {
    const { journal } = await journalWith(intent('vanishing'));
    const racing: Journal = { ...journal, read: async () => undefined };
    const [stray] = await findStrayEntries(policyOf(), racing);
    expect(stray).toMatchObject({ name: 'vanishing', phase: 'unreadable' });
    expect(stray!.message).not.toMatch(/holds a new secret|cannot be read/);
  });

  it('a read that fails with no error at all still gives the stray its line', async () => {
    const { journal } = await journalWith(intent('odd'));
    const failing: Journal = { ...journal, read: () => Promise.reject(null as unknown as Error) };
    const [stray] = await findStrayEntries(policyOf(), failing);
    expect(stray).toMatchObject({ name: 'odd', phase: 'unreadable' });
  });

  it('a journal that cannot be listed is one line saying so, with the error code, not a crash', async () => {
    const { journal } = await journalWith();
    const failing: Journal = {
      ...journal,
      names: async () => {
        throw Object.assign(new Error('input/output error'), { code: 'EIO' });
      },
    };
    expect(await findStrayEntries(policyOf('a'), failing)).toEqual([
      { name: '(journal)', phase: 'unreadable', message: expect.stringContaining('(EIO)') },
    ]);
    const noCode: Journal = {
      ...journal,
      names: async () => {
        throw new Error('bucket gone');
      },
    };
    const [stray] = await findStrayEntries(policyOf('a'), noCode);
    expect(stray).toMatchObject({ name: '(journal)', phase: 'unreadable' });
    expect(stray!.message).toContain('bucket gone');
  });
});

import { existsSync, readdirSync } from 'node:fs';
import { appendFile, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { StateError } from '../../src/errors.js';
import { fileJournal } from '../../src/state/backends/file/file-journal.js';
import { journalLog } from '../../src/state/backends/file/journal-log.js';
import { frameRecord } from '../../src/state/backends/file/journal-log-records.js';
import type { JournalEntry } from '../../src/state/journal-entry.js';
import { anIntent } from '../helpers/journal-entries.js';
import { makeTempDir } from '../helpers/temp-dir.js';

describe('the journal log', () => {
  let dir: string;
  let folder: string;
  let log: string;
  beforeEach(async () => {
    dir = await makeTempDir();
    folder = join(dir, 'journal');
    log = join(folder, 'journal.log');
  });

  /** Records as another process (or an earlier run) appended them. */
  async function appendRaw(...records: Parameters<typeof frameRecord>[0][]): Promise<void> {
    await mkdir(folder, { recursive: true });
    await appendFile(log, Buffer.concat(records.map(frameRecord)));
  }

  it('replays the winning record of each name: the highest seq, whatever the order in the file', async () => {
    await appendRaw(
      { name: 'a', seq: 1, entry: anIntent('a', { reason: 'first' }) },
      { name: 'b', seq: 5, entry: anIntent('b') },
      { name: 'a', seq: 3, entry: anIntent('a', { reason: 'third' }) },
      // A compaction's copy of an older record, appended after the newer one.
      { name: 'a', seq: 2, entry: anIntent('a', { reason: 'second' }) },
      { name: 'b', seq: 6, erased: true },
    );
    const journal = fileJournal(dir);
    expect(await journal.read('a')).toMatchObject({ reason: 'third' });
    expect(await journal.read('b')).toBeUndefined();
    expect(await journal.names()).toEqual(['a']);
  });

  it('ignores a torn record (a power loss mid-append), and reads the records written after it', async () => {
    await appendRaw({ name: 'a', seq: 1, entry: anIntent('a', { reason: 'whole' }) });
    await appendFile(log, '\n{"name":"a","seq":2,"entry":{"version":1,"na');
    await appendRaw({ name: 'b', seq: 1, entry: anIntent('b') });
    const journal = fileJournal(dir);
    expect(await journal.read('a')).toMatchObject({ reason: 'whole' });
    expect(await journal.read('b')).toMatchObject({ name: 'b' });
  });

  it('leaves a record not yet ended by its newline for the next read', async () => {
    await appendRaw({ name: 'a', seq: 1, entry: anIntent('a', { reason: 'whole' }) });
    const line = frameRecord({ name: 'a', seq: 2, entry: anIntent('a', { reason: 'later' }) });
    await appendFile(log, line.subarray(0, line.length - 1));
    const journal = fileJournal(dir);
    expect(await journal.read('a')).toMatchObject({ reason: 'whole' });
    await appendFile(log, '\n');
    expect(await journal.read('a')).toMatchObject({ reason: 'later' });
  });

  it('refuses a damaged entry with a StateError naming the log and the name, and never drops it', async () => {
    await appendRaw({ name: 'a', seq: 1, entry: { ...anIntent('a'), oldId: 7 } });
    const error = await fileJournal(dir)
      .read('a')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateError);
    expect((error as Error).message).toMatch(/journal entry .*journal\.log \(entry for 'a'\) is damaged \(oldId: .*state forget a/);
    expect(await fileJournal(dir).names()).toEqual(['a']);
  });

  it('ignores lines that are no records: not JSON objects, without a name or seq, with neither entry nor erasure', async () => {
    await mkdir(folder, { recursive: true });
    const junk = [
      'null',
      '[]',
      '"text"',
      '{"seq":1,"entry":{}}',
      '{"name":"","seq":1,"entry":{}}',
      '{"name":"a","seq":1.5,"entry":{}}',
      '{"name":"a","seq":1}',
      '{"name":"a","seq":1,"erased":"yes"}',
    ];
    await writeFile(log, `${junk.join('\n')}\n`);
    await appendRaw({ name: 'b', seq: 1, entry: anIntent('b') });
    const journal = fileJournal(dir);
    expect(await journal.read('a')).toBeUndefined();
    expect(await journal.names()).toEqual(['b']);
  });

  it('writes, reads and erases through the log, and removes the log once no entry is live', async () => {
    const journal = fileJournal(dir);
    await journal.write(anIntent('a'));
    await journal.write(anIntent('b'));
    expect(await readdir(folder)).toEqual(['journal.log']);
    await journal.write(anIntent('a', { reason: 'again' }), { durable: false });
    expect(await journal.read('a')).toMatchObject({ reason: 'again' });
    await journal.erase('a');
    expect(await readdir(folder)).toEqual(['journal.log']);
    await journal.erase('b', { durable: false });
    expect(await readdir(folder)).toEqual([]);
    expect(await journal.names()).toEqual([]);
    expect(await fileJournal(dir).read('a')).toBeUndefined();
  });

  it('a process reads what another appended, and an erasure by one hides the entry from the other', async () => {
    const one = fileJournal(dir);
    const two = fileJournal(dir);
    await one.write(anIntent('a'));
    await one.write(anIntent('keep'));
    expect(await two.read('a')).toEqual(anIntent('a'));
    await two.erase('a');
    expect(await one.read('a')).toBeUndefined();
    expect(await one.names()).toEqual(['keep']);
  });

  it('a name written again after its records were compacted away reads as the new entry', async () => {
    const journal = fileJournal(dir);
    await journal.write(anIntent('a', { reason: 'first' }));
    await journal.erase('a');
    expect(await readdir(folder)).toEqual([]);
    await journal.write(anIntent('a', { reason: 'second' }));
    expect(await fileJournal(dir).read('a')).toMatchObject({ reason: 'second' });
  });

  it('rewrites the log with its live entries only when asked, and readers see the same entries', async () => {
    const journal = fileJournal(dir);
    for (let i = 0; i < 20; i++) await journal.write(anIntent('a', { reason: `write ${i}` }), { durable: false });
    await journal.write(anIntent('b'));
    const before = (await readFile(log)).length;
    await journalLog(folder, async () => ({ release: async () => undefined })).compact();
    expect((await readFile(log)).length).toBeLessThan(before / 5);
    expect(await fileJournal(dir).read('a')).toMatchObject({ reason: 'write 19' });
    expect(await journal.read('a')).toMatchObject({ reason: 'write 19' });
    expect((await fileJournal(dir).names()).sort()).toEqual(['a', 'b']);
  });

  it('an aside file a crashed compaction left is read like the log, and merged away by the next one', async () => {
    await appendRaw(
      { name: 'a', seq: 1, entry: anIntent('a', { reason: 'set aside' }) },
      { name: 'gone', seq: 1, entry: anIntent('gone') },
    );
    await rename(log, join(folder, 'journal.log.0123456789ab.old'));
    await appendRaw({ name: 'gone', seq: 2, erased: true });
    const journal = fileJournal(dir);
    expect(await journal.read('a')).toMatchObject({ reason: 'set aside' });
    expect(await journal.read('gone')).toBeUndefined();
    expect(await journal.names()).toEqual(['a']);
    expect(await readdir(folder)).toEqual(['journal.log']);
    expect(await fileJournal(dir).read('a')).toMatchObject({ reason: 'set aside' });
    expect(await fileJournal(dir).read('gone')).toBeUndefined();
  });

  describe('legacy per-name files', () => {
    const legacy = (name: string) => join(folder, `${name}.json`);
    const put = async (entry: JournalEntry) => {
      await mkdir(folder, { recursive: true });
      await writeFile(legacy(entry.name), `${JSON.stringify(entry, null, 2)}\n`);
    };

    it('an entry in its own file is read, written there while the file is there, and erased with it', async () => {
      await put(anIntent('old', { reason: 'from before' }));
      const journal = fileJournal(dir);
      expect(journal.describe('old')).toBe(legacy('old'));
      expect(journal.describe('new')).toBe(`${log} (entry for 'new')`);
      expect(await journal.read('old')).toMatchObject({ reason: 'from before' });
      await journal.write(anIntent('old', { reason: 'written since' }));
      expect(JSON.parse(await readFile(legacy('old'), 'utf8'))).toMatchObject({ reason: 'written since' });
      expect(await readdir(folder)).toEqual(['old.json']);
      expect(await journal.names()).toEqual(['old']);
      await journal.erase('old');
      expect(await readdir(folder)).toEqual([]);
    });

    it('a legacy file wins over the log for its name, and erasing the name removes both', async () => {
      const journal = fileJournal(dir);
      await journal.write(anIntent('x', { reason: 'in the log' }));
      await put(anIntent('x', { reason: 'planted' }));
      expect(await journal.read('x')).toMatchObject({ reason: 'planted' });
      await journal.erase('x');
      expect(await journal.read('x')).toBeUndefined();
      expect(await readdir(folder)).toEqual([]);
    });

    it('a held secret gets a file of its own, which an operator removes by hand: nothing of it stays in the log', async () => {
      const journal = fileJournal(dir);
      await journal.read('h');
      await journal.write(anIntent('h'));
      const held: JournalEntry = {
        ...anIntent('h'),
        phase: 'held',
        held: { problem: 'no id in the answer', heldAt: '2026-11-22T12:00:01.000Z', secret: { plain: 'xaat-held' } },
      };
      await journal.write(held);
      expect(JSON.parse(await readFile(legacy('h'), 'utf8'))).toEqual(held);
      expect(await fileJournal(dir).read('h')).toEqual(held);
      await rm(legacy('h'));
      expect(await fileJournal(dir).read('h')).toBeUndefined();
      expect(await fileJournal(dir).names()).toEqual([]);
    });

    it('a held file beside the intent it replaced (killed before the erasure) erases the intent on read', async () => {
      const journal = fileJournal(dir);
      await journal.write(anIntent('k', { reason: 'the intent' }));
      const held: JournalEntry = {
        ...anIntent('k'),
        phase: 'held',
        held: { problem: 'no id in the answer', heldAt: '2026-11-22T12:00:01.000Z', secret: { plain: 'xaat-held' } },
      };
      await put(held); // the held write's file, its erasure never appended
      expect(await fileJournal(dir).read('k')).toEqual(held);
      await rm(legacy('k')); // as the operator is told to
      expect(await fileJournal(dir).read('k')).toBeUndefined();
      expect(await fileJournal(dir).names()).toEqual([]);
    });

    it('a damaged legacy file is refused as before, naming the file', async () => {
      await mkdir(folder, { recursive: true });
      await writeFile(legacy('bad'), 'not json');
      await expect(fileJournal(dir).read('bad')).rejects.toThrow(/journal entry .*bad\.json is not valid JSON.*move the file aside/);
    });
  });

  it.runIf(existsSync('/proc/self/fd'))('leaves no descriptor open across many rotations, each ending with the log removed', async () => {
    const journal = fileJournal(dir);
    const other = fileJournal(dir);
    const cycle = async (i: number) => {
      await journal.read('a');
      await journal.write(anIntent('a', { reason: `cycle ${i}` }));
      await journal.write(anIntent('a', { reason: `marks ${i}` }), { durable: false });
      expect(await other.read('a')).toMatchObject({ reason: `marks ${i}` });
      await journal.erase('a', { durable: i % 2 === 0 });
    };
    for (let i = 0; i < 5; i++) await cycle(i);
    const before = readdirSync('/proc/self/fd').length;
    for (let i = 0; i < 100; i++) await cycle(i);
    expect(readdirSync('/proc/self/fd').length).toBeLessThanOrEqual(before + 2);
    expect(await readdir(folder)).toEqual([]);
  });

  it('reads a log of many read(2)s, and rewrites it once it passes 1 MiB with entries still live', async () => {
    const journal = fileJournal(dir);
    const long = 'x'.repeat(1000);
    await journal.write(anIntent('kept'));
    for (let i = 0; i < 1100; i++) await journal.write(anIntent('busy', { reason: `${i} ${long}` }), { durable: false });
    expect((await readFile(log)).length).toBeGreaterThan(1024 * 1024);
    expect(await fileJournal(dir).read('busy')).toMatchObject({ reason: `1099 ${long}` });
    await journal.erase('busy');
    expect((await readFile(log)).length).toBeLessThan(4096);
    expect(await fileJournal(dir).read('kept')).toEqual(anIntent('kept'));
    expect(await fileJournal(dir).read('busy')).toBeUndefined();
  });

  it('fails to erase, never succeeds silently, when the journal folder was turned into a file', async () => {
    const journal = fileJournal(dir);
    await journal.read('x');
    await journal.write(anIntent('x'));
    await rm(folder, { recursive: true });
    await writeFile(folder, 'not a folder');
    await expect(journal.erase('x')).rejects.toThrow(/cannot erase journal entry .*ENOTDIR/);
    await expect(fileJournal(dir).erase('x')).rejects.toThrow(/ENOTDIR/);
    await expect(fileJournal(dir).read('x')).rejects.toThrow(/ENOTDIR/);
  });

  it('erasing a name without an entry writes nothing', async () => {
    await fileJournal(dir).erase('none');
    expect(await readdir(dir)).toEqual([]);
  });
});

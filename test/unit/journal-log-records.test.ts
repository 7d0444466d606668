import { describe, expect, it } from 'vitest';

import {
  applyRecords,
  frameRecord,
  type LogRecord,
  nextSeq,
  parseRecords,
  winnerOf,
} from '../../src/state/backends/file/journal-log-records.js';

const text = (value: string) => Buffer.from(value);

describe('journal log records', () => {
  it('frames a record as one line, with a newline before it that ends a torn one', () => {
    expect(frameRecord({ name: 'a', seq: 3, erased: true }).toString()).toBe('\n{"name":"a","seq":3,"erased":true}\n');
  });

  it('parses every record up to the last newline, and counts the bytes taken', () => {
    const bytes = Buffer.concat([frameRecord({ name: 'a', seq: 1, entry: { x: 1 } }), frameRecord({ name: 'b', seq: 2, erased: true })]);
    expect(parseRecords(bytes)).toEqual({
      records: [
        { name: 'a', seq: 1, entry: { x: 1 } },
        { name: 'b', seq: 2, erased: true },
      ],
      consumed: bytes.length,
    });
  });

  it('leaves a record without its newline for later, even a whole one', () => {
    expect(parseRecords(text('{"name":"a","seq":1,"erased":true}'))).toEqual({ records: [], consumed: 0 });
    expect(parseRecords(text('\n{"name":"a","seq":1,"erased":true}'))).toEqual({ records: [], consumed: 1 });
    expect(parseRecords(text('\n{"name":"a","seq":1,"erased":true}\n{"name":"b"'))).toEqual({
      records: [{ name: 'a', seq: 1, erased: true }],
      consumed: 36,
    });
    expect(parseRecords(text(''))).toEqual({ records: [], consumed: 0 });
  });

  it('skips torn lines and lines that are no records', () => {
    const lines = [
      '{"name":"a","seq":1,"entry":{"ver',
      'null',
      '7',
      '"text"',
      '[]',
      '{"seq":1,"entry":{}}',
      '{"name":"","seq":1,"entry":{}}',
      '{"name":7,"seq":1,"entry":{}}',
      '{"name":"a","seq":"1","entry":{}}',
      '{"name":"a","seq":1.5,"entry":{}}',
      '{"name":"a","seq":1}',
      '{"name":"a","seq":1,"erased":1}',
      '{"name":"ok","seq":9,"entry":null}',
    ];
    expect(parseRecords(text(`${lines.join('\n')}\n`)).records).toEqual([{ name: 'ok', seq: 9, entry: null }]);
  });

  it('keeps the highest seq of each name, and the later one on a tie', () => {
    const latest = new Map<string, LogRecord>();
    applyRecords(latest, [
      { name: 'a', seq: 2, entry: 'two' },
      { name: 'a', seq: 1, entry: 'one' },
      { name: 'b', seq: 5, entry: 'first' },
      { name: 'b', seq: 5, entry: 'second' },
    ]);
    expect(latest.get('a')).toMatchObject({ entry: 'two' });
    expect(latest.get('b')).toMatchObject({ entry: 'second' });
  });

  it('the winner among files is the highest seq; on a tie (copies) the first file', () => {
    const file = (...records: LogRecord[]) => new Map(records.map((r) => [r.name, r]));
    const files = [
      file({ name: 'a', seq: 1, entry: 'old' }, { name: 'c', seq: 4, entry: 'one' }),
      file({ name: 'a', seq: 2, erased: true }, { name: 'c', seq: 4, entry: 'copy' }),
    ];
    expect(winnerOf('a', files)).toEqual({ name: 'a', seq: 2, erased: true });
    expect(winnerOf('a', [...files].reverse())).toEqual({ name: 'a', seq: 2, erased: true });
    expect(winnerOf('c', files)).toMatchObject({ entry: 'one' });
    expect(winnerOf('none', files)).toBeUndefined();
    expect(winnerOf('a', [])).toBeUndefined();
  });

  it('the next seq is above what was seen, and at least the time in microseconds', () => {
    expect(nextSeq(undefined, 1000)).toBe(1_000_000);
    expect(nextSeq(undefined, 1.0007)).toBe(1000);
    expect(nextSeq(5_000_000_000, 1)).toBe(5_000_000_001);
    expect(nextSeq(7, 0)).toBe(8);
    expect(nextSeq(undefined, 0)).toBe(1);
  });
});

import type { ISecret } from 'kubernetes-models/v1/Secret';
import { afterEach, describe, expect, it, vi } from 'vitest';

import {
  LISTING_FORBIDDEN_RETRY_MS,
  LISTING_FRESH_MS,
  LISTING_RETRY_MS,
  SecretListings,
} from '../../src/sinks/kubernetes-secret/secret-listings.js';

const secret = (name: string, value = name): ISecret => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, data: { token: value } });
const valueOf = (s: ISecret | undefined) => s?.data?.token;

/** A LIST whose answers the test gives, one call at a time, and whose abort signals it sees. */
function fakeApi() {
  const calls: Array<{ namespace: string; signal: AbortSignal; answer(items: ISecret[] | 'forbidden'): void; fail(e: Error): void }> = [];
  let now = 0;
  const forbidden: string[] = [];
  const failed: string[] = [];
  const listings = new SecretListings({
    list: (namespace, signal) =>
      new Promise((resolve, reject) => {
        calls.push({ namespace, signal, answer: resolve, fail: reject });
        signal.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' })));
      }),
    onForbidden: (namespace) => forbidden.push(namespace),
    onListFailed: (namespace) => failed.push(namespace),
    now: () => now,
  });
  return { listings, calls, forbidden, failed, advance: (ms: number) => (now += ms) };
}

describe('SecretListings', () => {
  let api: ReturnType<typeof fakeApi>;
  afterEach(() => api.listings.close());

  it('answers concurrent reads in a namespace with one listing, and a Secret not in it with nothing (read it by name)', async () => {
    api = fakeApi();
    const reads = ['a', 'b', 'foreign'].map((name) => api.listings.lookup('apps', name));
    expect(api.calls).toHaveLength(1);
    api.calls[0]!.answer([secret('a'), secret('b')]);
    expect((await Promise.all(reads)).map(valueOf)).toEqual(['a', 'b', undefined]);
  });

  it('lists again for a Secret already answered, and for one whose listing is older than the freshness window', async () => {
    api = fakeApi();
    const first = api.listings.lookup('apps', 'a');
    api.calls[0]!.answer([secret('a'), secret('b'), secret('c')]);
    await first;
    // b was never read: the listing answers it while fresh.
    expect(valueOf(await api.listings.lookup('apps', 'b'))).toBe('b');
    expect(api.calls).toHaveLength(1);
    // a was: its next read needs a listing sent after that answer.
    const again = api.listings.lookup('apps', 'a');
    expect(api.calls).toHaveLength(2);
    api.calls[1]!.answer([secret('b'), secret('c')]);
    expect(await again).toBeUndefined();
    // c was never read, but the window has passed since the newest listing left.
    api.advance(LISTING_FRESH_MS);
    const late = api.listings.lookup('apps', 'c');
    expect(api.calls).toHaveLength(3);
    api.calls[2]!.answer([secret('c', 'c2')]);
    expect(valueOf(await late)).toBe('c2');
  });

  it('does not join a listing in flight that left before the Secret was last answered', async () => {
    api = fakeApi();
    const first = api.listings.lookup('apps', 'a');
    api.calls[0]!.answer([secret('a', 'old')]);
    await first;
    const other = api.listings.lookup('apps', 'b'); // in flight, for b
    api.listings.readByName('apps', 'b');
    const b = api.listings.lookup('apps', 'b');
    expect(api.calls).toHaveLength(3);
    api.calls[2]!.answer([secret('b', 'new')]);
    api.calls[1]!.answer([secret('b', 'stale')]);
    expect(valueOf(await b)).toBe('new');
    // The older listing's own reader never gets what its listing said; the newer answer went to b,
    // and an entry answers one read, so it reads b by name.
    expect(await other).toBeUndefined();
  });

  it('an older listing answering late never brings back what a newer one lacks', async () => {
    api = fakeApi();
    const first = api.listings.lookup('apps', 'x');
    api.calls[0]!.answer([secret('x')]);
    await first;
    const older = api.listings.lookup('apps', 'x'); // listing #2
    api.listings.readByName('apps', 'x');
    const newer = api.listings.lookup('apps', 'x'); // listing #3: #2 left before the read by name
    api.calls[2]!.answer([]);
    expect(await newer).toBeUndefined();
    api.calls[1]!.answer([secret('x', 'gone')]);
    // Not even its own reader: the newest listing lacks x, so x is to be read by name.
    expect(await older).toBeUndefined();
    const [y, x] = [api.listings.lookup('apps', 'y'), api.listings.lookup('apps', 'x')];
    expect(api.calls).toHaveLength(4);
    api.calls[3]!.answer([secret('y')]);
    expect(valueOf(await y)).toBe('y');
    expect(await x).toBeUndefined();
  });

  it('after our write, only a listing requested after it answers for the Secret: a deletion right after is seen', async () => {
    api = fakeApi();
    const inFlight = api.listings.lookup('apps', 'neighbour');
    api.listings.wrote('apps', 'mine');
    api.calls[0]!.answer([secret('neighbour'), secret('mine', 'before-the-write')]);
    await inFlight;
    const afterWrite = api.listings.lookup('apps', 'mine');
    expect(api.calls).toHaveLength(2);
    // Deleted by someone between our write and this read: not there, so it is read by name.
    api.calls[1]!.answer([secret('neighbour')]);
    expect(await afterWrite).toBeUndefined();
  });

  it('an entry answers one read and is dropped, and what no read took is dropped when its window ends', async () => {
    vi.useFakeTimers();
    try {
      api = fakeApi();
      const read = api.listings.lookup('apps', 'a');
      api.calls[0]!.answer([secret('a'), secret('unread-by-anyone')]);
      expect(valueOf(await read)).toBe('a');
      // A second read of a within the window needs a newer listing: the entry is gone.
      void api.listings.lookup('apps', 'a');
      expect(api.calls).toHaveLength(2);
      api.calls[1]!.answer([secret('a')]);
      // The unread neighbour from the first listing is dropped when that listing's window ends, not later.
      api.advance(LISTING_FRESH_MS);
      await vi.advanceTimersByTimeAsync(LISTING_FRESH_MS);
      const late = api.listings.lookup('apps', 'unread-by-anyone');
      expect(api.calls).toHaveLength(3);
      api.calls[2]!.answer([]);
      expect(await late).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });

  it('does not join a listing in flight requested more than the window ago', async () => {
    api = fakeApi();
    const slow = api.listings.lookup('apps', 'a');
    api.advance(LISTING_FRESH_MS);
    const later = api.listings.lookup('apps', 'b');
    expect(api.calls).toHaveLength(2);
    api.calls[1]!.answer([secret('b', 'fresh')]);
    expect(valueOf(await later)).toBe('fresh');
    api.calls[0]!.answer([secret('a')]);
    await slow;
  });

  it('a reader that gives up leaves the listing to the others; when all give up, the LIST is aborted', async () => {
    api = fakeApi();
    const quitter = new AbortController();
    const patient = api.listings.lookup('apps', 'a');
    const leaving = api.listings.lookup('apps', 'b', quitter.signal);
    quitter.abort();
    await expect(leaving).rejects.toMatchObject({ name: 'AbortError' });
    expect(api.calls[0]!.signal.aborted).toBe(false);
    api.calls[0]!.answer([secret('a')]);
    expect(valueOf(await patient)).toBe('a');

    const alone = new AbortController();
    const lonely = api.listings.lookup('apps', 'a', alone.signal);
    alone.abort();
    await expect(lonely).rejects.toMatchObject({ name: 'AbortError' });
    expect(api.calls[1]!.signal.aborted).toBe(true);
    // The next reader starts a listing of its own rather than join the aborted one.
    const next = api.listings.lookup('apps', 'a');
    expect(api.calls).toHaveLength(3);
    api.calls[2]!.answer([secret('a', 'a3')]);
    expect(valueOf(await next)).toBe('a3');
  });

  it('once the LIST is forbidden in a namespace, says so once and reads by name there for a quarter of an hour', async () => {
    api = fakeApi();
    const reads = [api.listings.lookup('apps', 'a'), api.listings.lookup('apps', 'b')];
    api.calls[0]!.answer('forbidden');
    expect(await Promise.all(reads)).toEqual([undefined, undefined]);
    api.advance(LISTING_FORBIDDEN_RETRY_MS - 1);
    expect(await api.listings.lookup('apps', 'a')).toBeUndefined();
    expect(api.calls).toHaveLength(1);
    expect(api.forbidden).toEqual(['apps']);
    // Another namespace is its own question.
    const elsewhere = api.listings.lookup('ops', 'a');
    api.calls[1]!.answer([secret('a')]);
    expect(valueOf(await elsewhere)).toBe('a');
  });

  it('asks again after the quarter of an hour: a grant of list made meanwhile takes effect without a restart', async () => {
    api = fakeApi();
    const refused = api.listings.lookup('apps', 'a');
    api.calls[0]!.answer('forbidden');
    expect(await refused).toBeUndefined();
    api.advance(LISTING_FORBIDDEN_RETRY_MS);
    // Still refused: read by name, and not said again.
    const again = api.listings.lookup('apps', 'a');
    api.calls[1]!.answer('forbidden');
    expect(await again).toBeUndefined();
    expect(api.forbidden).toEqual(['apps']);
    // Granted: the next listing answers.
    api.advance(LISTING_FORBIDDEN_RETRY_MS);
    const granted = api.listings.lookup('apps', 'a');
    api.calls[2]!.answer([secret('a', 'a2')]);
    expect(valueOf(await granted)).toBe('a2');
    expect(api.calls).toHaveLength(3);
  });

  it('a LIST that fails (too large, a server error) sends its readers to read by name, and is tried again after a while', async () => {
    api = fakeApi();
    const failing = [api.listings.lookup('apps', 'a'), api.listings.lookup('apps', 'b')];
    api.calls[0]!.fail(new Error('response too large'));
    expect(await Promise.all(failing)).toEqual([undefined, undefined]);
    expect(api.failed).toEqual(['apps']);
    // Not a LIST per read meanwhile: a namespace too large to list would be listed at every read.
    expect(await api.listings.lookup('apps', 'c')).toBeUndefined();
    expect(api.calls).toHaveLength(1);
    api.advance(LISTING_RETRY_MS);
    const retry = api.listings.lookup('apps', 'a');
    api.calls[1]!.answer([secret('a')]);
    expect(valueOf(await retry)).toBe('a');
  });
});

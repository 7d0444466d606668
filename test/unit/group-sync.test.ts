import { describe, expect, it, vi } from 'vitest';

import { groupSync } from '../../src/fs/group-sync.js';

/** A sync the test ends by hand, counting how many were started. */
function manualSyncs() {
  const ends: { resolve: () => void; reject: (error: Error) => void }[] = [];
  const sync = vi.fn(
    () =>
      new Promise<void>((resolve, reject) => {
        ends.push({ resolve, reject });
      }),
  );
  return { sync, ends };
}

/** Lets every settled promise's callbacks run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** Whether `promise` has settled yet, and how. */
function watch(promise: Promise<void>) {
  const seen = { state: 'pending' as 'pending' | 'resolved' | 'rejected', error: undefined as unknown };
  promise.then(
    () => (seen.state = 'resolved'),
    (error: unknown) => {
      seen.state = 'rejected';
      seen.error = error;
    },
  );
  return seen;
}

describe('a group commit around one sync', () => {
  it('the first caller starts a sync at once, and is answered when it ends', async () => {
    const { sync, ends } = manualSyncs();
    const request = groupSync(sync);
    const first = watch(request());
    expect(sync).toHaveBeenCalledTimes(1);
    await settle();
    expect(first.state).toBe('pending');
    ends[0]!.resolve();
    await settle();
    expect(first.state).toBe('resolved');
  });

  it('callers during a sync wait for one more that begins after it, shared by all of them', async () => {
    const { sync, ends } = manualSyncs();
    const request = groupSync(sync);
    const first = watch(request());
    const second = watch(request());
    const third = watch(request());
    expect(sync).toHaveBeenCalledTimes(1);
    ends[0]!.resolve();
    await settle();
    expect(first.state).toBe('resolved');
    // The sync that was running may have begun before their writes: they are not answered by it.
    expect(second.state).toBe('pending');
    expect(third.state).toBe('pending');
    expect(sync).toHaveBeenCalledTimes(2);
    const fourth = watch(request());
    ends[1]!.resolve();
    await settle();
    expect([second.state, third.state]).toEqual(['resolved', 'resolved']);
    expect(fourth.state).toBe('pending');
    expect(sync).toHaveBeenCalledTimes(3);
    ends[2]!.resolve();
    await settle();
    expect(fourth.state).toBe('resolved');
    expect(sync).toHaveBeenCalledTimes(3);
  });

  it('a failed sync rejects its own callers only; the waiting ones get a sync of their own', async () => {
    const { sync, ends } = manualSyncs();
    const request = groupSync(sync);
    const first = watch(request());
    const second = watch(request());
    ends[0]!.reject(Object.assign(new Error('EIO: injected'), { code: 'EIO' }));
    await settle();
    expect(first).toMatchObject({ state: 'rejected', error: { code: 'EIO' } });
    expect(second.state).toBe('pending');
    expect(sync).toHaveBeenCalledTimes(2);
    ends[1]!.resolve();
    await settle();
    expect(second.state).toBe('resolved');
  });

  it('on one descriptor, a failed sync fails for good: its callers, those waiting for the next one, and every later call', async () => {
    // Linux reports a failed writeback once, then marks the pages clean: a later fdatasync on the
    // same descriptor succeeds for records that never reached the disk.
    const { sync, ends } = manualSyncs();
    const request = groupSync(sync, undefined, { failForGood: true });
    const first = watch(request());
    const second = watch(request());
    const third = watch(request());
    ends[0]!.reject(Object.assign(new Error('EIO: injected'), { code: 'EIO' }));
    await settle();
    for (const caller of [first, second, third]) expect(caller).toMatchObject({ state: 'rejected', error: { code: 'EIO' } });
    await expect(request()).rejects.toMatchObject({ code: 'EIO' });
    expect(sync).toHaveBeenCalledTimes(1);
  });

  it('a sync that throws before it returns a promise rejects its callers, and the next call tries again', async () => {
    let fail = true;
    const request = groupSync(() => {
      if (fail) throw Object.assign(new Error('ENOENT: injected'), { code: 'ENOENT' });
      return Promise.resolve();
    });
    await expect(request()).rejects.toMatchObject({ code: 'ENOENT' });
    fail = false;
    await expect(request()).resolves.toBeUndefined();
  });

  it('tells when it is idle: after a sync nobody waits behind, not after one somebody does', async () => {
    const { sync, ends } = manualSyncs();
    const onIdle = vi.fn();
    const request = groupSync(sync, onIdle);
    const first = request();
    const second = request();
    ends[0]!.resolve();
    await first;
    expect(onIdle).not.toHaveBeenCalled();
    await settle();
    ends[1]!.resolve();
    await second;
    expect(onIdle).toHaveBeenCalledTimes(1);
  });

  it('tells when it is idle after a failed sync too', async () => {
    const onIdle = vi.fn();
    const request = groupSync(() => Promise.reject(new Error('EIO')), onIdle);
    await expect(request()).rejects.toThrow('EIO');
    expect(onIdle).toHaveBeenCalledTimes(1);
  });

  it('works without an idle callback', async () => {
    const request = groupSync(() => Promise.resolve());
    await expect(Promise.all([request(), request()])).resolves.toEqual([undefined, undefined]);
  });
});

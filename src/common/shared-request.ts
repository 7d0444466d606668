/**
 * One request that several callers wait for (a single flight). Each waiter brings its own abort
 * signal and gives up alone: the request itself is aborted only when every waiter has given up, so
 * one check stopped at its deadline never fails the others that share the request, and a request
 * nobody waits for any more is not left running.
 */
export interface SharedRequest<T> {
  /** Waits for the answer; rejects with the signal's reason as soon as `signal` aborts. */
  join(signal?: AbortSignal): Promise<T>;
  /** True once aborted for lack of waiters (or by `abort()`): a new waiter must start another. */
  readonly aborted: boolean;
  abort(): void;
}

export function shareRequest<T>(start: (signal: AbortSignal) => Promise<T>): SharedRequest<T> {
  const controller = new AbortController();
  const answer = start(controller.signal);
  let settled = false;
  let waiting = 0;
  // Also what keeps the failure of a request that every waiter left from going unhandled.
  const settle = () => {
    settled = true;
  };
  void answer.then(settle, settle);

  return {
    get aborted() {
      return controller.signal.aborted;
    },
    abort: () => controller.abort(),
    join(signal) {
      if (signal?.aborted) return Promise.reject(signal.reason as Error);
      waiting++;
      return new Promise<T>((resolve, reject) => {
        const leave = () => {
          waiting--;
          if (waiting === 0 && !settled) controller.abort();
          reject(signal!.reason as Error);
        };
        signal?.addEventListener('abort', leave, { once: true });
        void answer.then(
          (value) => {
            signal?.removeEventListener('abort', leave);
            resolve(value);
          },
          (error: unknown) => {
            signal?.removeEventListener('abort', leave);
            reject(error as Error);
          },
        );
      });
    },
  };
}

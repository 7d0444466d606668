/**
 * A value made on first use and kept for the rest of this turn of the event loop, then forgotten.
 * A policy is parsed synchronously, in one turn: what its many sinks each look up (the folders on
 * their way, the kubeconfig's default namespace) is looked up once per parse, and a policy read
 * again later (a reload) looks again.
 */
export function forThisTurn<T>(make: () => T): () => T {
  let kept: { value: T } | undefined;
  return () => {
    if (!kept) {
      kept = { value: make() };
      setImmediate(() => (kept = undefined)).unref();
    }
    return kept.value;
  };
}
